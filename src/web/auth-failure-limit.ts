import type { FastifyRequest } from 'fastify';
import { LRUCache } from 'lru-cache';
import { AuthError, type Principal } from '../auth/authenticator.js';
import { PublicError } from '../domain/errors.js';
import { AUTH_FAILURES_EXCEEDED_MESSAGE } from '../domain/rate-limit.js';
import type { RequestCounter } from '../rate-limit/request-counter.js';
import { ThrottledWarning } from '../throttled-warning.js';
import { clientAddressKey } from './client-address.js';
import type { Metrics } from '../metrics/metrics.js';
import { createRateLimiter } from './rate-limit.js';

/** A guessing address is refused thousands of times a second: its warning is logged at most this often. */
export const AUTH_FAILURE_WARNING_INTERVAL_MS = 10_000;

/**
 * How long a process takes an address found under the limit at its word, as long as no authentication from it fails
 * here meanwhile: a client whose key is right costs one look at the shared counter a second, not one a request (a round
 * trip to the primary or Redis, measured at 15–35 % of a hot page's CPU). A guesser loses nothing by it: each failure
 * forgets the address's standing and is counted, so its next request looks again, and once over the limit is refused.
 */
export const AUTH_STANDING_MEMO_MS = 1_000;
/** Addresses whose standing a process remembers at most; a flood of addresses can't grow memory past this. */
const REMEMBERED_ADDRESSES = 10_000;

/** What a process last learned of an address: until when it holds, and until when the address is refused (0: not). */
interface Standing {
  until: number;
  refusedUntil: number;
}

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

  const standings = new LRUCache<string, Standing>({ max: REMEMBERED_ADDRESSES });
  const refusedFor = (seenAs: string, at: number, retryAfterSeconds: number): Standing => {
    const refusedUntil = at + retryAfterSeconds * 1000;
    const standing = { until: refusedUntil, refusedUntil };
    standings.set(seenAs, standing);
    return standing;
  };

  // Standings are remembered by the address as seen, so that a request whose standing is known parses no address.
  return async (request, authenticate) => {
    const seenAs = request.ip;
    const counted = () => `auth-failure:${clientAddressKey(seenAs)}`;
    const at = Date.now();
    let standing = standings.get(seenAs);
    if (standing === undefined || standing.until <= at) {
      const before = await limiter.check(counted(), request.log);
      if (before.allowed) {
        standing = { until: at + AUTH_STANDING_MEMO_MS, refusedUntil: 0 };
        standings.set(seenAs, standing);
      } else standing = refusedFor(seenAs, at, before.retryAfterSeconds);
    }
    if (standing.refusedUntil > at) throw refuse(request, clientAddressKey(seenAs), Math.ceil((standing.refusedUntil - at) / 1000));
    try {
      return await authenticate();
    } catch (error) {
      if (!(error instanceof AuthError && error.status === 401 && error.reason !== 'missing')) throw error;
      standings.delete(seenAs);
      // Requests that passed the check at once may count past the limit: they are refused like those after them.
      const after = await limiter.count(counted(), request.log);
      if (after.allowed) throw error;
      refusedFor(seenAs, at, after.retryAfterSeconds);
      throw refuse(request, clientAddressKey(seenAs), after.retryAfterSeconds);
    }
  };
}
