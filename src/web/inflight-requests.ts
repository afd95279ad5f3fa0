import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { FastifyInstance } from 'fastify';
import { ServerBusyError } from '../domain/errors.js';
import { HEALTH_PATH, READINESS_PATH } from './probe-paths.js';

/** Probes answer whatever the load: an orchestrator must tell a busy process from a dead one. */
const EXEMPT_ROUTES = new Set([HEALTH_PATH, READINESS_PATH]);

interface InflightCount {
  count: () => number;
  /** Requests that arrived with `count` past the bound set by refuseBeyondInflightBound. */
  beyond: WeakSet<IncomingMessage>;
  max: number;
}

const counts = new WeakMap<Server, InflightCount>();

function countOf(server: Server): InflightCount {
  const known = counts.get(server);
  if (known !== undefined) return known;
  let inflight = 0;
  const counted: InflightCount = { count: () => inflight, beyond: new WeakSet(), max: Infinity };
  // Prepended, and decided here rather than in a hook: pipelined requests that arrive in one read are all parsed before
  // any hook runs, and the first of them must not be refused for those behind it.
  server.prependListener('request', (request: IncomingMessage, response: ServerResponse) => {
    inflight += 1;
    if (inflight > counted.max) counted.beyond.add(request);
    response.once('close', () => {
      inflight -= 1;
    });
  });
  counts.set(server, counted);
  return counted;
}

/**
 * The requests a server has begun and not finished: a request counts from its parsing until its answer is handed to
 * the kernel in full or its connection closes, so the answers queued behind a client that does not read count too.
 */
export function inflightRequests(server: Server): () => number {
  return countOf(server).count;
}

/**
 * Refuses with 503 and Retry-After, before any database work, each request that arrives with `max` already in flight
 * in this process. Pipelined requests that arrive in one read are all handled before any answer is written, so
 * thousands of connections that pipeline and never read had every answer built at once (over 1 GiB in one worker).
 */
export function refuseBeyondInflightBound(app: FastifyInstance, max: number): void {
  const counted = countOf(app.server);
  counted.max = max;
  app.addHook('onRequest', (request, _reply, done) => {
    if (counted.beyond.has(request.raw) && !EXEMPT_ROUTES.has(request.routeOptions.url ?? '')) return done(new ServerBusyError(max));
    done();
  });
}
