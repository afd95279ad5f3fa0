import type { BillingPlan } from '../../domain/billing-plan.js';
import { canonicalId, newId } from '../../domain/ids.js';
import type { Scope } from '../../domain/scopes.js';
import { columnList, KEY_COLUMNS } from '../columns.js';
import { revokedKeyConflict, successorKey } from '../key-rotation.js';
import type { KeyUse, KeyUseRecorder } from '../key-use-recorder.js';
import type { ApiKeyRecord, KeyRotation, KeyStore, KeyWithOwner, NewApiKey } from '../contracts/key-store.js';
import type { Row, StatementCache } from './statements.js';
import type { SqliteWriteLock } from './transaction.js';

export class SqliteKeyStore implements KeyStore {
  constructor(
    private readonly statements: StatementCache,
    private readonly writeLock: SqliteWriteLock,
    private readonly uses: KeyUseRecorder,
  ) {}

  async create(key: NewApiKey): Promise<ApiKeyRecord> {
    return this.writeLock.run(() => this.insert(key));
  }

  private insert(key: NewApiKey): ApiKeyRecord {
    const row = this.statements
      .get(
        `INSERT INTO api_keys (id, owner_id, label, scopes, secret_hash, start, created_at, expires_at)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?) RETURNING ${columnList(KEY_COLUMNS)}`,
      )
      .get(
        newId(),
        canonicalId(key.ownerId),
        key.label,
        JSON.stringify(key.scopes),
        key.secretHash,
        key.start ?? null,
        new Date().toISOString(),
        key.expiresAt,
      );
    return keyFromRow(row as Row);
  }

  async listForOwner(ownerId: string): Promise<ApiKeyRecord[]> {
    const rows = this.statements
      .get(`SELECT ${columnList(KEY_COLUMNS)} FROM api_keys WHERE owner_id = ? ORDER BY created_at, id`)
      .all(canonicalId(ownerId)) as Row[];
    return rows.map(keyFromRow);
  }

  async revoke(keyId: string): Promise<ApiKeyRecord | null> {
    const id = canonicalId(keyId);
    const row = await this.writeLock.run(() => {
      const revoked = this.statements
        .get(`UPDATE api_keys SET revoked_at = coalesce(revoked_at, ?) WHERE id = ? RETURNING ${columnList(KEY_COLUMNS)}`)
        .get(new Date().toISOString(), id);
      if (revoked) this.statements.get('DELETE FROM oauth_records WHERE account_id = ?').run(id);
      return revoked;
    });
    return row ? keyFromRow(row as Row) : null;
  }

  async rotate(rotation: KeyRotation): Promise<{ replaced: ApiKeyRecord; created: ApiKeyRecord } | null> {
    const id = canonicalId(rotation.oldKeyId);
    if (id === null) return null;
    return this.writeLock.run(() => {
      const old = this.statements
        .get(
          `UPDATE api_keys SET expires_at = min(coalesce(expires_at, ?), ?) WHERE id = ? AND revoked_at IS NULL
           RETURNING ${columnList(KEY_COLUMNS)}`,
        )
        .get(rotation.oldExpiresAt, rotation.oldExpiresAt, id) as Row | undefined;
      if (!old) return this.refuseRotation(id);
      const replaced = keyFromRow(old);
      const created = this.insert(successorKey(replaced, rotation));
      return { replaced, created };
    });
  }

  /** Why a key cannot be rotated: there is none (null), or it is revoked. */
  private refuseRotation(id: string): null {
    if (this.statements.get('SELECT 1 FROM api_keys WHERE id = ?').get(id)) throw revokedKeyConflict(id);
    return null;
  }

  async findByHash(secretHash: string): Promise<KeyWithOwner | null> {
    return this.findWithOwner('k.secret_hash = ?', secretHash);
  }

  async findById(keyId: string): Promise<KeyWithOwner | null> {
    const id = canonicalId(keyId);
    return id === null ? null : this.findWithOwner('k.id = ?', id);
  }

  private findWithOwner(condition: string, value: string): KeyWithOwner | null {
    const row = this.statements
      .get(
        `SELECT ${columnList(KEY_COLUMNS, 'k')}, u.plan AS owner_plan
         FROM api_keys k JOIN users u ON u.id = k.owner_id
         WHERE ${condition}`,
      )
      .get(value) as Row | undefined;
    return row ? { key: keyFromRow(row), ownerPlan: row.owner_plan as BillingPlan } : null;
  }

  async touch(keyId: string, usedAt: string, unlessUsedAfter: string): Promise<void> {
    const id = canonicalId(keyId);
    if (id !== null) await this.uses.record({ keyId: id, usedAt, unlessUsedAfter });
  }
}

/** Writes the uses in one transaction if no other connection is writing; else leaves them all. */
export function recordKeyUsesIfFree(statements: StatementCache, writeLock: SqliteWriteLock, uses: KeyUse[]): KeyUse[] {
  const touch = statements.get('UPDATE api_keys SET last_used_at = ? WHERE id = ? AND (last_used_at IS NULL OR last_used_at <= ?)');
  const recorded = writeLock.runIfFree(() => {
    for (const use of uses) touch.run(use.usedAt, use.keyId, use.unlessUsedAfter);
  });
  return recorded ? [] : uses;
}

function keyFromRow(row: Row): ApiKeyRecord {
  return {
    id: row.id as string,
    owner_id: row.owner_id as string,
    start: row.start as string | null,
    label: row.label as string | null,
    scopes: JSON.parse(row.scopes as string) as Scope[],
    created_at: row.created_at as string,
    expires_at: row.expires_at as string | null,
    last_used_at: row.last_used_at as string | null,
    revoked_at: row.revoked_at as string | null,
  };
}
