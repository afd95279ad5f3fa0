import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { FastifyInstance } from 'fastify';
import { ServerBusyError } from '../domain/errors.js';
import { HEALTH_PATH, READINESS_PATH } from './routes/health.js';

/** Probes answer whatever the load: an orchestrator must tell a busy process from a dead one. */
const EXEMPT_ROUTES = new Set([HEALTH_PATH, READINESS_PATH]);

const counts = new WeakMap<Server, () => number>();

/**
 * The requests a server has begun and not finished: a request counts from its parsing until its answer is handed to
 * the kernel in full or its connection closes, so the answers queued behind a client that does not read count too.
 */
export function inflightRequests(server: Server): () => number {
  const known = counts.get(server);
  if (known !== undefined) return known;
  let inflight = 0;
  // Prepended so the request being routed is already counted when the hook below looks.
  server.prependListener('request', (_request: IncomingMessage, response: ServerResponse) => {
    inflight += 1;
    response.once('close', () => {
      inflight -= 1;
    });
  });
  const count = () => inflight;
  counts.set(server, count);
  return count;
}

/**
 * Refuses with 503 and Retry-After, before any database work, each request past `max` in flight in this process.
 * Pipelined requests that arrive in one read are all parsed and handled before any answer is written, so thousands
 * of connections that pipeline and never read built every answer at once (over 1 GiB in one worker) until this bound.
 */
export function refuseBeyondInflightBound(app: FastifyInstance, max: number): void {
  const inflight = inflightRequests(app.server);
  app.addHook('onRequest', async (request) => {
    if (inflight() > max && !EXEMPT_ROUTES.has(request.routeOptions.url ?? '')) throw new ServerBusyError(max);
  });
}
