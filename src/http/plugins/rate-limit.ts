import fp from 'fastify-plugin';
import type { RequestCounter } from '../../rate-limit/request-counter.js';
import { createRateLimiter, noRateLimiter, type RateLimiter } from '../rate-limit.js';

declare module 'fastify' {
  interface FastifyInstance {
    /** Each API key's limit (RATE_LIMIT_PER_MINUTE): the REST routes spend one unit a request, /mcp one a tool call. */
    rateLimiter: RateLimiter;
  }
}

export interface RateLimitPluginOptions {
  /** RATE_LIMIT_PER_MINUTE; 0 = no limit. */
  perMinute: number;
  /** Where requests are counted; null when no limit is on. */
  counter: RequestCounter | null;
}

export default fp<RateLimitPluginOptions>(
  async (app, { perMinute, counter }) => {
    app.decorate('rateLimiter', counter === null ? noRateLimiter : createRateLimiter({ perMinute, counter, metrics: app.metrics }));
  },
  { name: 'rate-limit', dependencies: ['metrics'], decorators: { fastify: ['metrics'] } },
);
