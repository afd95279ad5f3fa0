import { secretOrThrow } from '../oauth-secrets.js';
import type { FoundOAuthRecord, OAuthRecord, OAuthStore } from '../contracts/oauth-store.js';
import type { StatementCache } from './statements.js';
import type { SqliteWriteLock } from './transaction.js';

export class SqliteOAuthStore implements OAuthStore {
  constructor(
    private readonly statements: StatementCache,
    private readonly writeLock: SqliteWriteLock,
  ) {}

  async save(record: OAuthRecord): Promise<void> {
    await this.writeLock.run(() =>
      this.statements
        .get(
          `INSERT INTO oauth_records (kind, id_hash, payload, grant_id, account_id, uid_hash, expires_at) VALUES (?, ?, ?, ?, ?, ?, ?)
           ON CONFLICT (kind, id_hash) DO UPDATE SET payload = excluded.payload, grant_id = excluded.grant_id,
             account_id = excluded.account_id, uid_hash = excluded.uid_hash, expires_at = excluded.expires_at`,
        )
        .run(record.kind, record.idHash, record.payload, record.grantId, record.accountId, record.uidHash, record.expiresAt),
    );
  }

  async find(kind: string, idHash: string, now: string): Promise<FoundOAuthRecord | null> {
    const row = this.statements
      .get('SELECT payload, consumed_at AS consumedAt FROM oauth_records WHERE kind = ? AND id_hash = ? AND expires_at > ?')
      .get(kind, idHash, now) as FoundOAuthRecord | undefined;
    return row ?? null;
  }

  async findByUid(kind: string, uidHash: string, now: string): Promise<FoundOAuthRecord | null> {
    const row = this.statements
      .get('SELECT payload, consumed_at AS consumedAt FROM oauth_records WHERE kind = ? AND uid_hash = ? AND expires_at > ?')
      .get(kind, uidHash, now) as FoundOAuthRecord | undefined;
    return row ?? null;
  }

  async consume(kind: string, idHash: string, at: string): Promise<void> {
    await this.writeLock.run(() =>
      this.statements
        .get('UPDATE oauth_records SET consumed_at = coalesce(consumed_at, ?) WHERE kind = ? AND id_hash = ?')
        .run(at, kind, idHash),
    );
  }

  async destroy(kind: string, idHash: string): Promise<void> {
    await this.writeLock.run(() => this.statements.get('DELETE FROM oauth_records WHERE kind = ? AND id_hash = ?').run(kind, idHash));
  }

  async revokeGrant(grantId: string): Promise<void> {
    await this.writeLock.run(() => this.statements.get('DELETE FROM oauth_records WHERE grant_id = ?').run(grantId));
  }

  async secret(name: string): Promise<string> {
    const row = this.statements.get('SELECT value FROM oauth_secrets WHERE name = ?').get(name) as { value: string } | undefined;
    return secretOrThrow(name, row?.value);
  }

  async pruneExpired(before: string, maxRows: number): Promise<number> {
    return this.writeLock.run(
      () =>
        this.statements
          .get(
            `DELETE FROM oauth_records WHERE (kind, id_hash) IN (
               SELECT kind, id_hash FROM oauth_records WHERE expires_at < ? ORDER BY expires_at LIMIT ?)`,
          )
          .run(before, maxRows).changes,
    );
  }
}
