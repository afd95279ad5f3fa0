import { idempotencyWindowStart } from '../../domain/idempotency.js';
import { claimOfHeld, type HeldIdempotencyKey } from '../idempotency.js';
import type { IdempotencyClaim, IdempotencyKey, IdempotencyStore, KeptAnswer } from '../contracts/idempotency-store.js';
import type { StatementCache } from './statements.js';
import type { SqliteWriteLock } from './transaction.js';

/**
 * Takes a free key, one whose window has passed (its answer is forgotten), or the same request's stale claim; returns a
 * row only when it did.
 */
const CLAIM_SQL = `INSERT INTO idempotency_keys (scope, idempotency_key, fingerprint, created_at) VALUES (?, ?, ?, ?)
  ON CONFLICT (scope, idempotency_key) DO UPDATE SET fingerprint = excluded.fingerprint, status = NULL, body = NULL,
    created_at = excluded.created_at, completed_at = NULL
  WHERE idempotency_keys.created_at < ?
    OR (idempotency_keys.completed_at IS NULL AND idempotency_keys.fingerprint = excluded.fingerprint AND idempotency_keys.created_at < ?)
  RETURNING 1`;

export class SqliteIdempotencyStore implements IdempotencyStore {
  constructor(
    private readonly statements: StatementCache,
    private readonly writeLock: SqliteWriteLock,
  ) {}

  // One write transaction for both statements: no other claim, in this process or another, comes between them.
  async claim({ scope, key }: IdempotencyKey, fingerprint: string, now: string, staleBefore?: string): Promise<IdempotencyClaim> {
    return this.writeLock.run(() => {
      const claimed = this.statements.get(CLAIM_SQL).get(scope, key, fingerprint, now, idempotencyWindowStart(now), staleBefore ?? null);
      if (claimed) return { state: 'claimed' };
      const held = this.statements
        .get('SELECT fingerprint, status, body FROM idempotency_keys WHERE scope = ? AND idempotency_key = ?')
        .get(scope, key) as HeldIdempotencyKey;
      return claimOfHeld(held, fingerprint);
    });
  }

  async complete(key: IdempotencyKey, { status, body, ownerId }: KeptAnswer, now: string): Promise<void> {
    await this.writeLock.run(() => {
      const kept = this.statements
        .get(
          `UPDATE idempotency_keys SET status = ?, body = ?, completed_at = ?, owner_id = ?
           WHERE scope = ? AND idempotency_key = ? AND completed_at IS NULL
             AND (? IS NULL OR EXISTS (SELECT 1 FROM users WHERE id = ?))`,
        )
        .run(status, body, now, ownerId, key.scope, key.key, ownerId, ownerId);
      if (kept.changes === 0 && ownerId !== null) this.forget(key);
    });
  }

  async release(key: IdempotencyKey): Promise<void> {
    await this.writeLock.run(() => this.forget(key));
  }

  private forget({ scope, key }: IdempotencyKey): void {
    this.statements.get('DELETE FROM idempotency_keys WHERE scope = ? AND idempotency_key = ? AND completed_at IS NULL').run(scope, key);
  }

  async pruneExpired(now: string, maxRows: number): Promise<number> {
    return this.writeLock.run(
      () =>
        this.statements
          .get(
            `DELETE FROM idempotency_keys WHERE (scope, idempotency_key) IN (
               SELECT scope, idempotency_key FROM idempotency_keys WHERE created_at < ? ORDER BY created_at LIMIT ?)`,
          )
          .run(idempotencyWindowStart(now), maxRows).changes,
    );
  }
}
