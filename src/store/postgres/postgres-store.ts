import type pg from 'pg';
import { importInBulk } from '../bulk-import.js';
import { KeyUseRecorder } from '../key-use-recorder.js';
import type { MigrationConnection } from '../contracts/migration.js';
import { runMigrations } from '../migrator.js';
import type { PagedListingOptions } from '../paged-listing.js';
import type { ContactStore, OwnerBatch } from '../contracts/contact-store.js';
import type { IdempotencyStore } from '../contracts/idempotency-store.js';
import type { KeyStore } from '../contracts/key-store.js';
import type { OAuthStore } from '../contracts/oauth-store.js';
import type { StoreOptions } from '../contracts/store-options.js';
import type { NewUser, UserStore } from '../contracts/user-store.js';
import type { WebhookStore } from '../contracts/webhook-store.js';
import type { PoolStats, Store } from '../store.js';
import { postgresPruneChanges } from './changes.js';
import { tidyContacts } from './after-import.js';
import { openPool } from './connection.js';
import { PostgresContactStore } from './contact-store.js';
import { PostgresIdempotencyStore } from './idempotency-store.js';
import { POSTGRES_DIALECT } from './dialect.js';
import { PostgresKeyStore, recordKeyUsesUnlessLocked } from './key-store.js';
import { POSTGRES_MIGRATIONS } from './migrations.js';
import { PostgresOAuthStore } from './oauth-store.js';
import { inTransaction, joiningTransaction } from './transaction.js';
import { PostgresUserStore } from './user-store.js';
import { PostgresWebhookStore } from './webhook-store.js';

/** Connects lazily to the PostgreSQL database at `url`; run migrate() before use. */
export function openPostgresStore(url: string, options: StoreOptions = {}): Store {
  return new PostgresStore(openPool(url, options), { stateTtlMs: options.listingStateTtlMs, pageCacheBytes: options.pageCacheBytes });
}

function migrationConnection(pool: pg.Pool): MigrationConnection {
  return {
    inTransaction: (work) =>
      inTransaction(pool, (client) =>
        work({
          exec: async (sql) => {
            await client.query(sql);
          },
          appliedVersions: async () => {
            const { rows } = await client.query<{ version: number }>('SELECT version FROM schema_migrations');
            return new Set(rows.map((row) => row.version));
          },
          record: async (migration, appliedAt) => {
            await client.query('INSERT INTO schema_migrations (version, name, applied_at) VALUES ($1, $2, $3)', [
              migration.version,
              migration.name,
              appliedAt,
            ]);
          },
        }),
      ),
  };
}

class PostgresStore implements Store {
  readonly dialect = POSTGRES_DIALECT;
  readonly users: UserStore;
  readonly keys: KeyStore;
  readonly contacts: ContactStore;
  readonly oauth: OAuthStore;
  readonly idempotency: IdempotencyStore;
  readonly webhooks: WebhookStore;
  private readonly keyUses: KeyUseRecorder;
  private closed = false;

  constructor(
    private readonly pool: pg.Pool,
    listingOptions: PagedListingOptions,
  ) {
    this.keyUses = new KeyUseRecorder((uses) => recordKeyUsesUnlessLocked(pool, uses));
    this.users = new PostgresUserStore(pool);
    this.keys = new PostgresKeyStore(pool, this.keyUses);
    this.contacts = new PostgresContactStore(pool, listingOptions);
    this.oauth = new PostgresOAuthStore(pool);
    this.idempotency = new PostgresIdempotencyStore(pool);
    this.webhooks = new PostgresWebhookStore(pool);
  }

  async migrate(): Promise<number[]> {
    return runMigrations(POSTGRES_DIALECT, migrationConnection(this.pool), POSTGRES_MIGRATIONS);
  }

  async pruneChanges(before: string, maxRows: number): Promise<number> {
    return postgresPruneChanges(this.pool, before, maxRows);
  }

  async ping(): Promise<void> {
    await this.pool.query('SELECT 1');
  }

  poolStats(): PoolStats {
    return { total: this.pool.totalCount, idle: this.pool.idleCount, waiting: this.pool.waitingCount };
  }

  async bulkImport(users: readonly NewUser[], batches: AsyncIterable<OwnerBatch>): Promise<{ usersCreated: number; contacts: number }> {
    const result = await inTransaction(this.pool, (client) => joiningTransaction(client, () => importInBulk(this, users, batches)));
    await tidyContacts(this.pool);
    return result;
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await this.keyUses.close();
    await this.pool.end();
  }
}
