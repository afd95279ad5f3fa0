import type { WindowHit } from '../domain/rate-limit.js';
import type { RequestCounter } from '../rate-limit/request-counter.js';
import { askPrimary } from './ipc.js';

/**
 * Of what a key's window still allows, the share a worker takes at once: one request in LEASE_SHARE of the rest, never
 * more than MAX_LEASE. Near the limit (within LEASE_SHARE requests of it) every request is counted by the primary alone.
 */
export const LEASE_SHARE = 64;
export const MAX_LEASE = 256;

/** The requests a primary counted for a worker beyond the one it asked for: the worker answers them itself. */
export interface LeasedHit extends WindowHit {
  leased: number;
}

/** How many requests the primary counts in advance for the worker that sent a request counted `count`-th under `limit`. */
export function leaseFor(count: number, limit: number | undefined): number {
  if (limit === undefined) return 0;
  return Math.max(0, Math.min(MAX_LEASE, Math.floor((limit - count) / LEASE_SHARE)));
}

/** Keys with a lease past which ended leases are swept before another is kept. */
const MAX_LEASED_KEYS = 10_000;

/** Counts a worker was given in advance, within one window: blocks of consecutive counts, used in the order given. */
interface Lease {
  blocks: { next: number; last: number }[];
  endsAt: number;
}

/**
 * A worker's rate-limit counter: the primary counts for every worker, so the limit holds per instance. A round trip to
 * the primary per request cost more than the rest of a hot page (issue 35), so while a key's window is far from its limit
 * the primary counts a block of requests at once for the asking worker (leaseFor), which the worker then counts out by
 * itself, each with the count it was given. No key is ever let past its limit; a key whose requests move to another
 * worker may be refused up to the blocks left unused in the others (1/LEASE_SHARE of what its window had left, each).
 *
 * A worker asks for one key at a time: requests that find no count left wait for the ask under way and take from its
 * block (concurrent asks each reserved a block, and keeping only the last one refused a busy key 30% of the time at a
 * fraction of its limit). A block that arrives while others are left is kept beside them, never dropped.
 */
export function createPrimaryCounter(now: () => number = Date.now): RequestCounter {
  const leases = new Map<string, Lease>();
  const asking = new Map<string, Promise<unknown>>();

  const fromLease = (key: string, at: number): WindowHit | null => {
    const lease = leases.get(key);
    if (lease === undefined) return null;
    if (lease.endsAt > at) {
      while (lease.blocks.length > 0) {
        const block = lease.blocks[0]!;
        if (block.next <= block.last) return { count: block.next++, resetInMs: lease.endsAt - at };
        lease.blocks.shift();
      }
    }
    leases.delete(key);
    return null;
  };

  const keep = (key: string, first: number, leased: number, resetInMs: number) => {
    const at = now();
    const block = { next: first, last: first + leased - 1 };
    const lease = leases.get(key);
    if (lease !== undefined && lease.endsAt > at) {
      lease.blocks.push(block);
      return;
    }
    if (leases.size >= MAX_LEASED_KEYS) for (const [leasedKey, { endsAt }] of leases) if (endsAt <= at) leases.delete(leasedKey);
    leases.set(key, { blocks: [block], endsAt: at + resetInMs });
  };

  const ask = async (key: string, limit: number | undefined): Promise<WindowHit> => {
    const hit = await askPrimary<LeasedHit>({ kind: 'rate-limit-hit', key, limit });
    if (hit.leased > 0) keep(key, hit.count + 1, hit.leased, hit.resetInMs);
    return { count: hit.count, resetInMs: hit.resetInMs };
  };

  return {
    kind: 'memory',
    async hit(key, limit) {
      const leased = fromLease(key, now());
      if (leased !== null) return leased;
      const pending = asking.get(key);
      if (pending !== undefined) {
        await pending.catch(() => undefined);
        const afterWait = fromLease(key, now());
        if (afterWait !== null) return afterWait;
      }
      const asked = ask(key, limit);
      if (!asking.has(key)) {
        asking.set(key, asked);
        const done = () => {
          if (asking.get(key) === asked) asking.delete(key);
        };
        asked.then(done, done);
      }
      return asked;
    },
    peek: (key) => askPrimary<WindowHit>({ kind: 'rate-limit-peek', key }),
    close: async () => leases.clear(),
  };
}
