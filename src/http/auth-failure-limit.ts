import type { FastifyRequest } from 'fastify';
import { AuthError, type Principal } from '../auth/authenticator.js';
import { PublicError } from '../domain/errors.js';
import { AUTH_FAILURES_EXCEEDED_MESSAGE } from '../domain/rate-limit.js';
import type { RequestCounter } from '../rate-limit/request-counter.js';
import { ThrottledWarning } from '../throttled-warning.js';
import { clientAddressKey } from './client-address.js';
import type { Metrics } from './metrics.js';
import { createRateLimiter } from './rate-limit.js';

/** A guessing address is refused thousands of times a second: its warning is logged at most this often. */
export const AUTH_FAILURE_WARNING_INTERVAL_MS = 10_000;

/**
 * Authenticates a request through `authenticate`, unless its client address has failed authentication
 * AUTH_FAILURES_PER_MINUTE times in its window: then it answers 429 with Retry-After before the credentials are read, so
 * a right key is refused like a wrong one (a guesser learns nothing) and a flood costs one look at a counter each.
 */
export type LimitAuthFailures = (request: FastifyRequest, authenticate: () => Promise<Principal>) => Promise<Principal>;

export const noAuthFailureLimit: LimitAuthFailures = (_request, authenticate) => authenticate();

export interface AuthFailureLimitOptions {
  /** AUTH_FAILURES_PER_MINUTE; 0 turns the limit off. */
  perMinute: number;
  /** The API's counter (memory, the cluster's primary, or Redis); null when no limit is on. */
  counter: RequestCounter | null;
  metrics: Metrics;
}

/**
 * Counts failed authentications per client address (clientAddressKey) in the rate limit's counter, under keys of their
 * own, and fails open with it. A 401 counts unless no credentials were sent at all: address book and MCP clients ask
 * without them first, to be told how to authenticate. A 403 (a right key without the scope or the plan) does not.
 */
export function createAuthFailureLimit(options: AuthFailureLimitOptions): LimitAuthFailures {
  const { perMinute, counter, metrics } = options;
  if (perMinute === 0 || counter === null) return noAuthFailureLimit;
  const limiter = createRateLimiter({ perMinute, counter, metrics, policy: 'auth-failures' });
  const warning = new ThrottledWarning(AUTH_FAILURE_WARNING_INTERVAL_MS);

  const refuse = (request: FastifyRequest, address: string, retryAfterSeconds: number) => {
    metrics.authFailureLimited.inc();
    const refusalsNotLogged = warning.occurred();
    if (refusalsNotLogged !== null) {
      request.log.warn({ address, refusalsNotLogged }, 'refusing a client address over its limit of failed authentications');
    }
    return new PublicError(429, AUTH_FAILURES_EXCEEDED_MESSAGE, { headers: { 'retry-after': String(retryAfterSeconds) } });
  };

  return async (request, authenticate) => {
    const address = clientAddressKey(request.ip);
    const key = `auth-failure:${address}`;
    const before = await limiter.check(key, request.log);
    if (!before.allowed) throw refuse(request, address, before.retryAfterSeconds);
    try {
      return await authenticate();
    } catch (error) {
      if (!(error instanceof AuthError && error.status === 401 && error.reason !== 'missing')) throw error;
      // Requests that passed the check at once may count past the limit: they are refused like those after them.
      const after = await limiter.count(key, request.log);
      throw after.allowed ? error : refuse(request, address, after.retryAfterSeconds);
    }
  };
}
