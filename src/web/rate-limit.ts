import type { FastifyBaseLogger, FastifyReply } from 'fastify';
import { decide, RATE_LIMIT_WINDOW_MS, type RateLimitDecision, type WindowHit } from '../domain/rate-limit.js';
import type { RequestCounter } from '../rate-limit/request-counter.js';
import { ThrottledWarning } from '../throttled-warning.js';
import { PublicError } from '../domain/errors.js';
import { RATE_LIMIT_EXCEEDED_MESSAGE } from '../domain/rate-limit.js';
import type { Metrics } from '../metrics/metrics.js';

/** While the counter fails, its warning is logged at most this often (with how many were left out). */
export const FAIL_OPEN_WARNING_INTERVAL_MS = 10_000;

/**
 * Counts a request against its API key's limit, after authentication (so 401 and 403 never spend
 * quota): sets the rate-limit headers on the reply, and throws a 429 PublicError with Retry-After once
 * the key is over. Every authenticated route calls it with the key id it resolved.
 */
export type EnforceRateLimit = (keyId: string, reply: FastifyReply) => Promise<void>;

/** What counting one more request against a key decided, with the headers that describe the key's window after it. */
export type RateLimitVerdict =
  { allowed: true; headers: Record<string, string> } | { allowed: false; headers: Record<string, string>; retryAfterSeconds: number };

/** Counts one more request against a key and returns the verdict without throwing: a refusal is the caller's to report. */
export type CountRequest = (keyId: string, log: FastifyBaseLogger) => Promise<RateLimitVerdict>;

/** One limit, three ways to apply it: a route refuses the request, the MCP endpoint refuses one tool call of a batch, and
 * `check` tells whether one more would be allowed without counting it (the failed-authentication limit's look before a key
 * is read). */
export interface RateLimiter {
  enforce: EnforceRateLimit;
  count: CountRequest;
  check: CountRequest;
}

export interface RateLimitOptions {
  /** Requests per key per minute; 0 turns rate limiting off. */
  perMinute: number;
  /** The policy's name in the RateLimit headers; default `default` (the API key's). */
  policy?: string;
  counter: RequestCounter;
  metrics: Metrics;
  now?: () => number;
}

/** No limit: what an app without rate limiting (RATE_LIMIT_PER_MINUTE=0, or most tests) uses. */
export const noRateLimiter: RateLimiter = {
  enforce: async () => undefined,
  count: async () => ({ allowed: true, headers: {} }),
  check: async () => ({ allowed: true, headers: {} }),
};

/**
 * When the counter fails (Redis down or slow), the request is let through without a limit: a cache
 * outage must not take the API down. Each such request increments a metric, and a warning is logged at
 * most once per FAIL_OPEN_WARNING_INTERVAL_MS.
 */
export function createRateLimiter(options: RateLimitOptions): RateLimiter {
  const { perMinute: limit, counter, metrics, policy: name = 'default', now = Date.now } = options;
  if (limit === 0) return noRateLimiter;
  const windowSeconds = RATE_LIMIT_WINDOW_MS / 1000;
  const policy = `"${name}";q=${limit};w=${windowSeconds}`;
  const failOpenWarning = new ThrottledWarning(FAIL_OPEN_WARNING_INTERVAL_MS, now);

  const verdictOf = async (read: () => Promise<WindowHit>, log: FastifyBaseLogger): Promise<RateLimitVerdict> => {
    let decision: RateLimitDecision;
    try {
      decision = decide(limit, await read());
    } catch (error) {
      metrics.rateLimitFailOpen.inc();
      const failuresNotLogged = failOpenWarning.occurred();
      if (failuresNotLogged !== null) {
        log.warn(
          { err: error, counter: counter.kind, failuresNotLogged },
          'rate limit counter failed; requests are allowed without a limit until it recovers',
        );
      }
      // The policy still holds; only the count is unknown.
      return { allowed: true, headers: { 'ratelimit-policy': policy, 'x-ratelimit-limit': String(limit) } };
    }
    const headers = rateLimitHeaders(name, policy, decision);
    return decision.allowed ? { allowed: true, headers } : { allowed: false, headers, retryAfterSeconds: decision.resetSeconds };
  };
  const count: CountRequest = (keyId, log) => verdictOf(() => counter.hit(keyId, limit), log);
  // As if one more were counted: allowed while the window has room for it.
  const check: CountRequest = (keyId, log) =>
    verdictOf(async () => {
      const { count: counted, resetInMs } = await counter.peek(keyId);
      return { count: counted + 1, resetInMs };
    }, log);

  const enforce: EnforceRateLimit = async (keyId, reply) => {
    const verdict = await count(keyId, reply.log);
    reply.headers(verdict.headers);
    if (!verdict.allowed) {
      metrics.rateLimited.inc();
      throw new PublicError(429, RATE_LIMIT_EXCEEDED_MESSAGE, { headers: { 'retry-after': String(verdict.retryAfterSeconds) } });
    }
  };

  return { enforce, count, check };
}

/** The IETF headers (draft-ietf-httpapi-ratelimit-headers) and the legacy X-RateLimit-* trio. */
function rateLimitHeaders(name: string, policy: string, decision: RateLimitDecision): Record<string, string> {
  return {
    'ratelimit-policy': policy,
    ratelimit: `"${name}";r=${decision.remaining};t=${decision.resetSeconds}`,
    'x-ratelimit-limit': String(decision.limit),
    'x-ratelimit-remaining': String(decision.remaining),
    'x-ratelimit-reset': String(decision.resetSeconds),
  };
}
