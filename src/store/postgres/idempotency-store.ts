import type pg from 'pg';
import { idempotencyWindowStart } from '../../domain/idempotency.js';
import { claimOfHeld, type HeldIdempotencyKey } from '../idempotency.js';
import type { IdempotencyClaim, IdempotencyKey, IdempotencyStore, KeptAnswer } from '../contracts/idempotency-store.js';
import { pruneOldest } from './prune.js';

/**
 * Takes a free key, one whose window has passed (its answer is forgotten), or the same request's stale claim; returns a
 * row only when it did. A claim that meets another's uncommitted row waits for it, then finds the key held: of
 * concurrent claims one takes it.
 */
const CLAIM_SQL = `INSERT INTO idempotency_keys (scope, idempotency_key, fingerprint, created_at)
  VALUES ($1::text, $2::text, $3::text, $4::timestamptz)
  ON CONFLICT (scope, idempotency_key) DO UPDATE SET fingerprint = EXCLUDED.fingerprint, status = NULL, body = NULL,
    created_at = EXCLUDED.created_at, completed_at = NULL
  WHERE idempotency_keys.created_at < $5::timestamptz
    OR (idempotency_keys.completed_at IS NULL AND idempotency_keys.fingerprint = EXCLUDED.fingerprint
      AND idempotency_keys.created_at < $6::timestamptz)
  RETURNING 1`;
const HELD_SQL = 'SELECT fingerprint, status, body FROM idempotency_keys WHERE scope = $1::text AND idempotency_key = $2::text';
/**
 * Keeps the answer, for its owner only while the owner is there: the owner's row is locked (FOR KEY SHARE) so that a
 * delete of the user running meanwhile either finished first (no row: the answer is not kept) or waits, then deletes
 * the kept answer with the user.
 */
const COMPLETE_SQL = `WITH owner AS (SELECT id FROM users WHERE id = $6::uuid FOR KEY SHARE)
  UPDATE idempotency_keys SET status = $3::integer, body = $4::text, completed_at = $5::timestamptz, owner_id = (SELECT id FROM owner)
  WHERE scope = $1::text AND idempotency_key = $2::text AND completed_at IS NULL
    AND ($6::uuid IS NULL OR EXISTS (SELECT 1 FROM owner))`;
/** A key released between a claim's two statements is claimed again, this many times at most. */
const CLAIM_ATTEMPTS = 3;

export class PostgresIdempotencyStore implements IdempotencyStore {
  constructor(private readonly pool: pg.Pool) {}

  async claim({ scope, key }: IdempotencyKey, fingerprint: string, now: string, staleBefore?: string): Promise<IdempotencyClaim> {
    for (let attempt = 0; attempt < CLAIM_ATTEMPTS; attempt += 1) {
      const claimed = await this.pool.query(CLAIM_SQL, [scope, key, fingerprint, now, idempotencyWindowStart(now), staleBefore ?? null]);
      if (claimed.rowCount === 1) return { state: 'claimed' };
      const { rows } = await this.pool.query<HeldIdempotencyKey>(HELD_SQL, [scope, key]);
      if (rows[0]) return claimOfHeld(rows[0], fingerprint);
    }
    // Claimed and released over and over by others: it is in use.
    return { state: 'in_progress' };
  }

  async complete(key: IdempotencyKey, { status, body, ownerId }: KeptAnswer, now: string): Promise<void> {
    const { rowCount } = await this.pool.query(COMPLETE_SQL, [key.scope, key.key, status, body, now, ownerId]);
    if (rowCount === 0 && ownerId !== null) await this.release(key);
  }

  async release({ scope, key }: IdempotencyKey): Promise<void> {
    await this.pool.query('DELETE FROM idempotency_keys WHERE scope = $1::text AND idempotency_key = $2::text AND completed_at IS NULL', [
      scope,
      key,
    ]);
  }

  async pruneExpired(now: string, maxRows: number): Promise<number> {
    return pruneOldest(this.pool, 'idempotency_keys', 'created_at', idempotencyWindowStart(now), maxRows);
  }
}
