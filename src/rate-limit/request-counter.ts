import type { WindowHit } from '../domain/rate-limit.js';

/**
 * Counts requests per key in fixed windows. One instance keeps the counts in memory; several share
 * them in Redis. A failing counter rejects, and the caller decides what that means (fail open).
 */
export interface RequestCounter {
  readonly kind: 'memory' | 'redis';
  /**
   * Counts one request for `key` and reports its window's count and time left. `limit`, the limit the count is held
   * to, lets a cluster worker's counter take a share of a window far from it in advance (src/cluster/primary-counter.ts).
   */
  hit(key: string, limit?: number): Promise<WindowHit>;
  /** Reports `key`'s running window without counting anything: a count of 0 when none runs. */
  peek(key: string): Promise<WindowHit>;
  close(): Promise<void>;
}
