import type pg from 'pg';
import type { BillingPlan } from '../../domain/billing-plan.js';
import { canonicalId, newId } from '../../domain/ids.js';
import { columnList, KEY_COLUMNS } from '../columns.js';
import { revokedKeyConflict, successorKey } from '../key-rotation.js';
import type { KeyUse, KeyUseRecorder } from '../key-use-recorder.js';
import type { ApiKeyRecord, KeyRotation, KeyStore, KeyWithOwner, NewApiKey } from '../contracts/key-store.js';
import { inTransaction } from './transaction.js';

const INSERT_KEY_SQL = `INSERT INTO api_keys (id, owner_id, label, scopes, secret_hash, start, created_at, expires_at)
  VALUES ($1::uuid, $2::uuid, $3::text, $4::text[], $5::text, $6::text, $7::timestamptz, $8::timestamptz)
  RETURNING ${columnList(KEY_COLUMNS)}`;

/** The OAuth records bound to the key go in the same statement as its revocation. */
const REVOKE_KEY_SQL = `WITH revoked AS (
    UPDATE api_keys SET revoked_at = coalesce(revoked_at, $1::timestamptz) WHERE id = $2::uuid RETURNING ${columnList(KEY_COLUMNS)}
  ), oauth AS (
    DELETE FROM oauth_records WHERE account_id IN (SELECT id::text FROM revoked)
  )
  SELECT ${columnList(KEY_COLUMNS)} FROM revoked`;

/** The key a rotation replaces, locked: it expires at the rotation's time or its own, whichever is sooner. */
const EXPIRE_REPLACED_KEY_SQL = `UPDATE api_keys SET expires_at = least(expires_at, $1::timestamptz)
  WHERE id = $2::uuid AND revoked_at IS NULL RETURNING ${columnList(KEY_COLUMNS)}`;

function insertKeyValues(key: NewApiKey): unknown[] {
  return [
    newId(),
    canonicalId(key.ownerId),
    key.label,
    key.scopes,
    key.secretHash,
    key.start ?? null,
    new Date().toISOString(),
    key.expiresAt,
  ];
}

export class PostgresKeyStore implements KeyStore {
  constructor(
    private readonly pool: pg.Pool,
    private readonly uses: KeyUseRecorder,
  ) {}

  async create(key: NewApiKey): Promise<ApiKeyRecord> {
    const { rows } = await this.pool.query<ApiKeyRecord>(INSERT_KEY_SQL, insertKeyValues(key));
    return rows[0]!;
  }

  async listForOwner(ownerId: string): Promise<ApiKeyRecord[]> {
    const id = canonicalId(ownerId);
    if (id === null) return [];
    const { rows } = await this.pool.query<ApiKeyRecord>(
      `SELECT ${columnList(KEY_COLUMNS)} FROM api_keys WHERE owner_id = $1::uuid ORDER BY created_at, id`,
      [id],
    );
    return rows;
  }

  async revoke(keyId: string): Promise<ApiKeyRecord | null> {
    const id = canonicalId(keyId);
    if (id === null) return null;
    const { rows } = await this.pool.query<ApiKeyRecord>(REVOKE_KEY_SQL, [new Date().toISOString(), id]);
    return rows[0] ?? null;
  }

  async rotate(rotation: KeyRotation): Promise<{ replaced: ApiKeyRecord; created: ApiKeyRecord } | null> {
    const id = canonicalId(rotation.oldKeyId);
    if (id === null) return null;
    return inTransaction(this.pool, async (client) => {
      const { rows } = await client.query<ApiKeyRecord>(EXPIRE_REPLACED_KEY_SQL, [rotation.oldExpiresAt, id]);
      const replaced = rows[0];
      if (!replaced) {
        const { rowCount } = await client.query('SELECT 1 FROM api_keys WHERE id = $1::uuid', [id]);
        if (rowCount === 1) throw revokedKeyConflict(id);
        return null;
      }
      const { rows: created } = await client.query<ApiKeyRecord>(INSERT_KEY_SQL, insertKeyValues(successorKey(replaced, rotation)));
      return { replaced, created: created[0]! };
    });
  }

  async findByHash(secretHash: string): Promise<KeyWithOwner | null> {
    return this.findWithOwner('api_keys_find_by_hash', 'k.secret_hash = $1::text', secretHash);
  }

  async findById(keyId: string): Promise<KeyWithOwner | null> {
    const id = canonicalId(keyId);
    return id === null ? null : this.findWithOwner('api_keys_find_by_id', 'k.id = $1::uuid', id);
  }

  private async findWithOwner(name: string, condition: string, value: string): Promise<KeyWithOwner | null> {
    const { rows } = await this.pool.query<ApiKeyRecord & { owner_plan: BillingPlan }>({
      name,
      text: `SELECT ${columnList(KEY_COLUMNS, 'k')}, u.plan AS owner_plan
             FROM api_keys k JOIN users u ON u.id = k.owner_id
             WHERE ${condition}`,
      values: [value],
    });
    const row = rows[0];
    if (!row) return null;
    const { owner_plan: ownerPlan, ...key } = row;
    return { key, ownerPlan };
  }

  async touch(keyId: string, usedAt: string, unlessUsedAfter: string): Promise<void> {
    const id = canonicalId(keyId);
    if (id !== null) await this.uses.record({ keyId: id, usedAt, unlessUsedAfter });
  }
}

/**
 * Records the uses whose keys no other transaction has locked (SKIP LOCKED: a touch never queues behind a
 * transaction holding an api_keys row, so it holds its pool connection for one short statement), and returns
 * the uses still due that it had to skip. The final SELECT reads the snapshot from before the update.
 */
const RECORD_KEY_USES_SQL = `
  WITH uses AS (
    SELECT * FROM unnest($1::uuid[], $2::timestamptz[], $3::timestamptz[]) AS u(id, used_at, unless_used_after)
  ), free AS (
    SELECT k.id FROM api_keys k JOIN uses ON uses.id = k.id
    WHERE k.last_used_at IS NULL OR k.last_used_at <= uses.unless_used_after
    FOR UPDATE OF k SKIP LOCKED
  ), touched AS (
    UPDATE api_keys k SET last_used_at = uses.used_at FROM free JOIN uses ON uses.id = free.id
    WHERE k.id = free.id RETURNING k.id
  )
  SELECT uses.id FROM uses JOIN api_keys k ON k.id = uses.id
  WHERE (k.last_used_at IS NULL OR k.last_used_at <= uses.unless_used_after) AND uses.id NOT IN (SELECT id FROM touched)`;

export async function recordKeyUsesUnlessLocked(pool: pg.Pool, uses: KeyUse[]): Promise<KeyUse[]> {
  const { rows } = await pool.query<{ id: string }>({
    name: 'api_keys_record_uses',
    text: RECORD_KEY_USES_SQL,
    values: [uses.map((use) => use.keyId), uses.map((use) => use.usedAt), uses.map((use) => use.unlessUsedAfter)],
  });
  const skipped = new Set(rows.map((row) => row.id));
  return uses.filter((use) => skipped.has(use.keyId));
}
