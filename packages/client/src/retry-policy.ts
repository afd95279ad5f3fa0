import { NetworkError, RateLimitError, ServerError } from './errors.js';

export interface RetryPolicy {
  /** Retries after the first attempt. */
  maxRetries: number;
  /** Upper bound of the first backoff delay; it doubles with every retry. */
  initialDelayMs: number;
  /** Cap on every wait, including one a `Retry-After` asks for. */
  maxDelayMs: number;
  /** A number in [0, 1), for the jitter. */
  random: () => number;
}

/**
 * How long to wait before retry number `retry` (0 for the first) after `error`, or undefined when the
 * call must fail now: the error isn't transient (4xx other than 429, an unexpected response), the
 * retries are used up, or the server asked to wait longer than the policy ever waits.
 *
 * The server's `Retry-After` is honoured as given. Otherwise the delay is "equal jitter" exponential
 * backoff: a random point in the upper half of `min(maxDelayMs, initialDelayMs * 2^retry)`, so clients
 * that failed together spread out, yet every retry still waits at least half its step.
 */
export function retryDelay(policy: RetryPolicy, error: unknown, retry: number): number | undefined {
  if (retry >= policy.maxRetries) return undefined;
  if (!(error instanceof RateLimitError || error instanceof ServerError || error instanceof NetworkError)) return undefined;
  const asked = error instanceof NetworkError ? undefined : error.retryAfterMs;
  if (asked !== undefined) return asked <= policy.maxDelayMs ? asked : undefined;
  const step = Math.min(policy.maxDelayMs, policy.initialDelayMs * 2 ** retry);
  return step / 2 + policy.random() * (step / 2);
}

/**
 * `Retry-After` as milliseconds from now: delay-seconds (`120`) or an HTTP date, a past date being 0.
 * Undefined when absent or unreadable, so the backoff applies.
 */
export function parseRetryAfter(value: string | null, now: number = Date.now()): number | undefined {
  if (value === null) return undefined;
  const text = value.trim();
  if (/^\d+$/.test(text)) return Number(text) * 1000;
  const at = Date.parse(text);
  return Number.isNaN(at) ? undefined : Math.max(0, at - now);
}

/** Waits `ms`, or rejects with the signal's reason as soon as it aborts. */
export function abortableSleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) {
      reject(signal.reason);
      return;
    }
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal!.reason);
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}
