import type pg from 'pg';
import { secretOrThrow } from '../oauth-secrets.js';
import type { FoundOAuthRecord, OAuthRecord, OAuthStore } from '../contracts/oauth-store.js';
import { pruneOldest } from './prune.js';

const FOUND_COLUMNS = `payload, to_char(consumed_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') AS "consumedAt"`;

export class PostgresOAuthStore implements OAuthStore {
  constructor(private readonly pool: pg.Pool) {}

  async save(record: OAuthRecord): Promise<void> {
    await this.pool.query({
      name: 'oauth_records_save',
      text: `INSERT INTO oauth_records (kind, id_hash, payload, grant_id, account_id, uid_hash, expires_at)
             VALUES ($1::text, $2::text, $3::text, $4::text, $5::text, $6::text, $7::timestamptz)
             ON CONFLICT (kind, id_hash) DO UPDATE SET payload = EXCLUDED.payload, grant_id = EXCLUDED.grant_id,
               account_id = EXCLUDED.account_id, uid_hash = EXCLUDED.uid_hash, expires_at = EXCLUDED.expires_at`,
      values: [record.kind, record.idHash, record.payload, record.grantId, record.accountId, record.uidHash, record.expiresAt],
    });
  }

  async find(kind: string, idHash: string, now: string): Promise<FoundOAuthRecord | null> {
    const { rows } = await this.pool.query<FoundOAuthRecord>({
      name: 'oauth_records_find',
      text: `SELECT ${FOUND_COLUMNS} FROM oauth_records WHERE kind = $1::text AND id_hash = $2::text AND expires_at > $3::timestamptz`,
      values: [kind, idHash, now],
    });
    return rows[0] ?? null;
  }

  async findByUid(kind: string, uidHash: string, now: string): Promise<FoundOAuthRecord | null> {
    const { rows } = await this.pool.query<FoundOAuthRecord>({
      name: 'oauth_records_find_by_uid',
      text: `SELECT ${FOUND_COLUMNS} FROM oauth_records WHERE kind = $1::text AND uid_hash = $2::text AND expires_at > $3::timestamptz`,
      values: [kind, uidHash, now],
    });
    return rows[0] ?? null;
  }

  async consume(kind: string, idHash: string, at: string): Promise<void> {
    await this.pool.query({
      name: 'oauth_records_consume',
      text: 'UPDATE oauth_records SET consumed_at = coalesce(consumed_at, $3::timestamptz) WHERE kind = $1::text AND id_hash = $2::text',
      values: [kind, idHash, at],
    });
  }

  async destroy(kind: string, idHash: string): Promise<void> {
    await this.pool.query('DELETE FROM oauth_records WHERE kind = $1::text AND id_hash = $2::text', [kind, idHash]);
  }

  async revokeGrant(grantId: string): Promise<void> {
    await this.pool.query('DELETE FROM oauth_records WHERE grant_id = $1::text', [grantId]);
  }

  async secret(name: string): Promise<string> {
    const { rows } = await this.pool.query<{ value: string }>('SELECT value FROM oauth_secrets WHERE name = $1::text', [name]);
    return secretOrThrow(name, rows[0]?.value);
  }

  async pruneExpired(before: string, maxRows: number): Promise<number> {
    return pruneOldest(this.pool, 'oauth_records', 'expires_at', before, maxRows);
  }
}
