import { createHash, timingSafeEqual } from 'node:crypto';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { FastifyInstance } from 'fastify';
import { extractBearerToken } from '../auth/authenticator.js';
import { INTERNAL_ERROR_MESSAGE, PublicError } from '../domain/errors.js';

export const METRICS_PATH = '/metrics';

/** What serves the metrics text: a prom-client registry, or a cluster primary's aggregate of its workers. */
export interface MetricsSource {
  readonly contentType: string;
  metrics(): Promise<string>;
}
export const INVALID_METRICS_TOKEN_MESSAGE = 'Invalid metrics token';

const sha256 = (text: string) => createHash('sha256').update(text).digest();

/** Serves the metrics on the main port to a scraper that sends `Authorization: Bearer <METRICS_TOKEN>`. */
export function registerMetricsRoute(app: FastifyInstance, deps: { registry: MetricsSource; token: string }): void {
  // Comparing fixed-length digests keeps the comparison's time independent of the token.
  const expected = sha256(deps.token);
  app.get(METRICS_PATH, { schema: { hide: true } }, async (request, reply) => {
    const presented = extractBearerToken(request.headers.authorization);
    if (presented === null || !timingSafeEqual(sha256(presented), expected)) {
      throw new PublicError(401, INVALID_METRICS_TOKEN_MESSAGE, { headers: { 'www-authenticate': 'Bearer realm="metrics"' } });
    }
    return reply.type(deps.registry.contentType).send(await deps.registry.metrics());
  });
}

export interface MetricsListener {
  url: string;
  close(): Promise<void>;
}

/** Serves only GET /metrics on a port of its own (METRICS_PORT), meant to stay off the public network. */
export async function listenForMetrics(registry: MetricsSource, address: { host: string; port: number }): Promise<MetricsListener> {
  const server = createServer((request, response) => {
    const json = { 'content-type': 'application/json; charset=utf-8', 'cache-control': 'no-store' };
    const path = (request.url ?? '').split('?', 1)[0];
    if (path !== METRICS_PATH || (request.method !== 'GET' && request.method !== 'HEAD')) {
      response.writeHead(404, json).end(JSON.stringify({ error: `This port serves only GET ${METRICS_PATH}` }));
      return;
    }
    registry.metrics().then(
      (text) => {
        response.writeHead(200, { 'content-type': registry.contentType, 'cache-control': 'no-store' });
        response.end(request.method === 'HEAD' ? undefined : text);
      },
      () => response.writeHead(500, json).end(JSON.stringify({ error: INTERNAL_ERROR_MESSAGE })),
    );
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(address.port, address.host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const { port } = server.address() as AddressInfo;
  const host = address.host.includes(':') ? `[${address.host}]` : address.host;
  return {
    url: `http://${host}:${port}${METRICS_PATH}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
