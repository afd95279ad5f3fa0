import type { IdempotencyClaim } from './contracts/idempotency-store.js';

/** An Idempotency-Key another request claimed within the window: its fingerprint, and its answer once complete. */
export interface HeldIdempotencyKey {
  fingerprint: string;
  status: number | null;
  body: string | null;
}

/** What a claim of a key already held answers (the same on both databases). */
export function claimOfHeld(held: HeldIdempotencyKey, fingerprint: string): IdempotencyClaim {
  if (held.fingerprint !== fingerprint) return { state: 'mismatch' };
  if (held.status === null || held.body === null) return { state: 'in_progress' };
  return { state: 'replay', status: held.status, body: held.body };
}
