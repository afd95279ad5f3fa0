import fp from 'fastify-plugin';
import type { Counter, Histogram } from 'prom-client';
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
    // The labelled series of each (method, route, status): prom-client hashes a label set on every call otherwise.
    const series = new Map<string, { requests: Counter.Internal; duration: Histogram.Internal<string> }>();
    const seriesOf = (method: string, route: string, status: number) => {
      const key = `${method} ${status} ${route}`;
      let found = series.get(key);
      if (found === undefined) {
        const labels = { method, route, status_code: String(status) };
        found = { requests: metrics.httpRequests.labels(labels), duration: metrics.httpDuration.labels(labels) };
        series.set(key, found);
      }
      return found;
    };
    app.addHook('onResponse', (request, reply, done) => {
      const { requests, duration } = seriesOf(request.method, request.routeOptions.url ?? UNMATCHED_ROUTE, reply.statusCode);
      requests.inc();
      duration.observe(reply.elapsedTime / 1000);
      done();
    });
    app.addHook('onError', async (_request, _reply, error) => {
      if (error instanceof AuthError) metrics.authFailures.inc({ reason: error.reason });
    });
  },
  { name: 'metrics' },
);
