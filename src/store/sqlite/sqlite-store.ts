import type Database from 'better-sqlite3';
import { importInBulk } from '../bulk-import.js';
import { KeyUseRecorder } from '../key-use-recorder.js';
import type { MigrationConnection } from '../contracts/migration.js';
import { pendingMigrations, runMigrations } from '../migrator.js';
import type { PagedListingOptions } from '../paged-listing.js';
import type { OwnerBatch } from '../contracts/contact-store.js';
import type { IdempotencyStore } from '../contracts/idempotency-store.js';
import type { KeyStore } from '../contracts/key-store.js';
import type { OAuthStore } from '../contracts/oauth-store.js';
import type { StoreOptions } from '../contracts/store-options.js';
import type { NewUser, UserStore } from '../contracts/user-store.js';
import type { WebhookStore } from '../contracts/webhook-store.js';
import type { Store } from '../store.js';
import { SqliteBulkLoad } from './bulk-load.js';
import { sqlitePruneChanges } from './changes.js';
import { openDatabase } from './connection.js';
import { SqliteContactStore } from './contact-store.js';
import { SqliteIdempotencyStore } from './idempotency-store.js';
import { SQLITE_DIALECT } from './dialect.js';
import { recordKeyUsesIfFree, SqliteKeyStore } from './key-store.js';
import { SqliteOAuthStore } from './oauth-store.js';
import { SQLITE_MIGRATIONS } from './migrations.js';
import { StatementCache } from './statements.js';
import type { SqliteWriteLock } from './transaction.js';
import { SqliteUserStore } from './user-store.js';
import { SqliteWebhookStore } from './webhook-store.js';

/** Opens the SQLite database at `path`, in WAL mode: creating it if needed, unless `options.mustExist`. */
export function openSqliteStore(path: string, options: StoreOptions = {}): Store {
  const { db, writeLock, detachedReason } = openDatabase(path, options);
  const openImportConnection = path === ':memory:' ? null : () => openDatabase(path, { ...options, mustExist: true }, writeLock.turn);
  return new SqliteStore(
    db,
    writeLock,
    detachedReason,
    { stateTtlMs: options.listingStateTtlMs, pageCacheBytes: options.pageCacheBytes },
    openImportConnection,
  );
}

/**
 * The page cache of the connection streamed imports use. A large import's transaction outgrows SQLite's default 2 MB
 * and spills to the WAL over and over; this much keeps most of that while a worker's memory stays bounded.
 */
const IMPORT_CACHE_KIB = 64 * 1024;

function appliedVersions(statements: StatementCache): Set<number> {
  const table = statements.get("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'schema_migrations'").get();
  const rows = table ? (statements.get('SELECT version FROM schema_migrations').all() as { version: number }[]) : [];
  return new Set(rows.map((row) => row.version));
}

function migrationConnection(db: Database.Database, writeLock: SqliteWriteLock): MigrationConnection {
  const statements = StatementCache.of(db);
  return {
    peekAppliedVersions: async () => appliedVersions(statements),
    // An immediate transaction: it holds the write lock, which is the migration lock.
    // better-sqlite3 is synchronous, so every promise of the session is settled when awaited: the run ends within one
    // turn of the event loop, and nothing else in this process uses the connection while the transaction is open.
    inTransaction: async (work) => {
      if (!(await writeLock.begin())) throw new Error('migrations cannot run inside another transaction');
      try {
        const result = await work({
          exec: async (sql) => {
            db.exec(sql);
          },
          appliedVersions: async () => appliedVersions(statements),
          record: async (migration, appliedAt) => {
            statements
              .get('INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, ?)')
              .run(migration.version, migration.name, appliedAt);
          },
        });
        db.exec('COMMIT');
        return result;
      } catch (error) {
        if (db.inTransaction) db.exec('ROLLBACK');
        throw error;
      }
    },
  };
}

class SqliteStore implements Store {
  readonly dialect = SQLITE_DIALECT;
  readonly users: UserStore;
  readonly keys: KeyStore;
  readonly contacts: SqliteContactStore;
  readonly oauth: OAuthStore;
  readonly idempotency: IdempotencyStore;
  readonly webhooks: WebhookStore;
  private readonly keyUses: KeyUseRecorder;
  private readonly statements: StatementCache;

  /** The connection streamed imports use, once one has run. */
  private importDb: Database.Database | null = null;

  constructor(
    private readonly db: Database.Database,
    private readonly writeLock: SqliteWriteLock,
    readonly detachedReason: () => string | null,
    listingOptions: PagedListingOptions,
    openImportConnection: (() => { db: Database.Database; writeLock: SqliteWriteLock }) | null,
  ) {
    const statements = StatementCache.of(db);
    this.statements = statements;
    this.keyUses = new KeyUseRecorder(async (uses) => recordKeyUsesIfFree(statements, writeLock, uses));
    this.users = new SqliteUserStore(statements, writeLock);
    this.keys = new SqliteKeyStore(statements, writeLock, this.keyUses);
    this.contacts = new SqliteContactStore(
      statements,
      writeLock,
      listingOptions,
      openImportConnection === null
        ? undefined
        : () => {
            const opened = openImportConnection();
            this.importDb = opened.db;
            opened.db.exec(`PRAGMA cache_size = -${IMPORT_CACHE_KIB}`);
            return new SqliteContactStore(StatementCache.of(opened.db), opened.writeLock, listingOptions);
          },
    );
    this.oauth = new SqliteOAuthStore(statements, writeLock);
    this.idempotency = new SqliteIdempotencyStore(statements, writeLock);
    this.webhooks = new SqliteWebhookStore(statements, writeLock);
  }

  async migrate(): Promise<number[]> {
    return runMigrations(SQLITE_DIALECT, migrationConnection(this.db, this.writeLock), SQLITE_MIGRATIONS);
  }

  async bulkImport(users: readonly NewUser[], batches: AsyncIterable<OwnerBatch>): Promise<{ usersCreated: number; contacts: number }> {
    // One connection in this process, so awaiting between statements inside BEGIN is safe; the stores' own
    // transactions nest as savepoints.
    return SqliteBulkLoad.run(this.db, this.writeLock, async (load) => {
      this.contacts.bulkLoad = load;
      try {
        return await importInBulk(this, users, batches);
      } finally {
        this.contacts.bulkLoad = null;
      }
    });
  }

  async pruneChanges(before: string, maxRows: number): Promise<number> {
    return sqlitePruneChanges(this.statements, this.writeLock, before, maxRows);
  }

  async ping(): Promise<void> {
    const detached = this.detachedReason();
    if (detached !== null) throw new Error(detached);
    // Ready means the API would answer: a file that is there but not migrated (an empty one restored in its place)
    // is not ready.
    if (pendingMigrations(SQLITE_MIGRATIONS, appliedVersions(this.statements)).length > 0)
      throw new Error('the database is not migrated: run contacts-read-api migrate');
  }

  async close(): Promise<void> {
    await this.keyUses.close();
    this.importDb?.close();
    this.db.close();
  }
}
