import { countRequest, type RateWindow, type WindowHit } from '../domain/rate-limit.js';
import type { RequestCounter } from './request-counter.js';

/** A counter in memory, which can also count requests in advance (a cluster's primary, for its workers). */
export interface MemoryCounter extends RequestCounter {
  /** hit(), at once: a caller that counts more in the same window (reserve) does so before any other request is counted. */
  hitNow(key: string): WindowHit;
  /** Counts `units` more requests in `key`'s running window, as if they had arrived; nothing when none runs. */
  reserve(key: string, units: number): void;
}

/** Counts in this process only: right for one instance, and the clock is injectable for tests. */
export function createMemoryCounter(options: { windowMs: number; now?: () => number }): MemoryCounter {
  const { windowMs, now = Date.now } = options;
  const windows = new Map<string, RateWindow>();
  let nextSweepAt = 0;

  const hitNow = (key: string): WindowHit => {
    const at = now();
    // Ended windows are dropped once per window length, so memory follows the keys seen recently.
    if (at >= nextSweepAt) {
      for (const [stale, window] of windows) if (window.endsAt <= at) windows.delete(stale);
      nextSweepAt = at + windowMs;
    }
    const window = countRequest(windows.get(key), at, windowMs);
    windows.set(key, window);
    return { count: window.count, resetInMs: window.endsAt - at };
  };

  return {
    kind: 'memory',
    hitNow,
    hit: async (key) => hitNow(key),
    async peek(key) {
      const at = now();
      const window = windows.get(key);
      return window === undefined || window.endsAt <= at
        ? { count: 0, resetInMs: 0 }
        : { count: window.count, resetInMs: window.endsAt - at };
    },
    reserve(key, units) {
      const window = windows.get(key);
      if (window !== undefined && window.endsAt > now()) window.count += units;
    },
    async close() {
      windows.clear();
    },
  };
}
