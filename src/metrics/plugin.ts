import fp from 'fastify-plugin';
import { AuthError } from '../auth/authenticator.js';
import type { Metrics } from './metrics.js';

declare module 'fastify' {
  interface FastifyInstance {
    /** The service's Prometheus metrics, which the rate limits count into too. */
    metrics: Metrics;
  }
}

/** The route label of requests that matched no route, so unknown URLs can't grow the label set. */
export const UNMATCHED_ROUTE = 'unmatched';

export interface MetricsOptions {
  metrics: Metrics;
}

/** Counts and times every response by route pattern (never the raw URL), and authentication failures by reason. */
export default fp<MetricsOptions>(
  async (app, { metrics }) => {
    app.decorate('metrics', metrics);
    app.addHook('onResponse', async (request, reply) => {
      const labels = {
        method: request.method,
        route: request.routeOptions.url ?? UNMATCHED_ROUTE,
        status_code: String(reply.statusCode),
      };
      metrics.httpRequests.inc(labels);
      metrics.httpDuration.observe(labels, reply.elapsedTime / 1000);
    });
    app.addHook('onError', async (_request, _reply, error) => {
      if (error instanceof AuthError) metrics.authFailures.inc({ reason: error.reason });
    });
  },
  { name: 'metrics' },
);
