import fp from 'fastify-plugin';
import type { RequestCounter } from '../../rate-limit/request-counter.js';
import { createAuthFailureLimit, type LimitAuthFailures } from '../auth-failure-limit.js';
import { createRateLimiter, noRateLimiter, type RateLimiter } from '../rate-limit.js';

declare module 'fastify' {
  interface FastifyInstance {
    /** Each API key's limit (RATE_LIMIT_PER_MINUTE): the REST routes spend one unit a request, /mcp one a tool call. */
    rateLimiter: RateLimiter;
    /** Each client address's failed authentications (AUTH_FAILURES_PER_MINUTE), across REST, /mcp, CardDAV and the consent page. */
    limitAuthFailures: LimitAuthFailures;
  }
}

export interface RateLimitPluginOptions {
  /** RATE_LIMIT_PER_MINUTE; 0 = no limit. */
  perMinute: number;
  /** AUTH_FAILURES_PER_MINUTE; 0 = no limit. */
  authFailuresPerMinute: number;
  /** Where requests are counted; null when no limit is on. */
  counter: RequestCounter | null;
}

export default fp<RateLimitPluginOptions>(
  async (app, { perMinute, authFailuresPerMinute, counter }) => {
    const { metrics } = app;
    app.decorate('rateLimiter', counter === null ? noRateLimiter : createRateLimiter({ perMinute, counter, metrics }));
    app.decorate('limitAuthFailures', createAuthFailureLimit({ perMinute: authFailuresPerMinute, counter, metrics }));
  },
  { name: 'rate-limit', dependencies: ['metrics'], decorators: { fastify: ['metrics'] } },
);
