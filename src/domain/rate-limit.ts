/** What a request (or a tool call) over its key's limit is told. */
export const RATE_LIMIT_EXCEEDED_MESSAGE = 'Rate limit exceeded';
/** What a client address past its limit of failed authentications is told, whatever credentials it sends. */
export const AUTH_FAILURES_EXCEEDED_MESSAGE = 'Too many failed authentications';

/** Every limit counts requests per key in windows of one minute. */
export const RATE_LIMIT_WINDOW_MS = 60_000;

/**
 * One key's current window. The limiter uses a fixed window that opens at the key's first request
 * after the previous window ended, so it needs one counter per key, one atomic step per request, and
 * no agreement between instances' clocks (Redis expires the counter on its own clock).
 */
export interface RateWindow {
  /** Requests counted in this window, including the current one. */
  count: number;
  /** When the window ends, in milliseconds on the counter's clock. */
  endsAt: number;
}

/** What a counter reports for one request: the window's count with it, and the time left in the window. */
export interface WindowHit {
  count: number;
  resetInMs: number;
}

/** The outcome of counting one request against a limit. */
export interface RateLimitDecision {
  allowed: boolean;
  limit: number;
  /** Requests still allowed in this window (never negative). */
  remaining: number;
  /** Whole seconds until the window ends (at least 1, so a client never retries at once). */
  resetSeconds: number;
}

/** Counts one request at `now`: it joins the running window, or opens a new one when that has ended. */
export function countRequest(window: RateWindow | undefined, now: number, windowMs: number): RateWindow {
  if (window === undefined || window.endsAt <= now) return { count: 1, endsAt: now + windowMs };
  return { count: window.count + 1, endsAt: window.endsAt };
}

/** The request that makes the count exceed the limit, and every one after it in the window, is refused. */
export function decide(limit: number, hit: WindowHit): RateLimitDecision {
  return {
    allowed: hit.count <= limit,
    limit,
    remaining: Math.max(0, limit - hit.count),
    resetSeconds: Math.max(1, Math.ceil(hit.resetInMs / 1000)),
  };
}
