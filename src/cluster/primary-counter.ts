import type { WindowHit } from '../domain/rate-limit.js';
import type { RequestCounter } from '../rate-limit/request-counter.js';
import { askPrimary } from './ipc.js';

/** A worker's rate-limit counter: the primary counts for every worker, so the limit holds per instance. */
export function createPrimaryCounter(): RequestCounter {
  return {
    kind: 'memory',
    hit: (key) => askPrimary<WindowHit>({ kind: 'rate-limit-hit', key }),
    peek: (key) => askPrimary<WindowHit>({ kind: 'rate-limit-peek', key }),
    close: async () => undefined,
  };
}
