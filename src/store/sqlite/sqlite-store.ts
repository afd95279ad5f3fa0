import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import Database from 'better-sqlite3';
import type { Contact, ContactValues } from '../../domain/contact.js';
import { InputError, NotFoundError } from '../../domain/errors.js';
import { canonicalId, isUuid, newId } from '../../domain/ids.js';
import { assertMergeAllowed, isRepeatedMerge, type MergeCandidate, type RepeatedMerge } from '../../domain/merge.js';
import type { PageRequest } from '../../domain/pagination.js';
import type { BillingPlan } from '../../domain/billing-plan.js';
import type { Scope } from '../../domain/scopes.js';
import { parseSearchRequest, searchMatcher } from '../../domain/search.js';
import { mergeChainResult, MAX_MERGE_HOPS } from '../merge-chain.js';
import { CONTACT_COLUMNS, CONTACT_VALUE_COLUMNS, contactFromRow, type ContactRow } from '../contact-row.js';
import { decideContactWrite, type ExistingContact } from '../contact-write.js';
import { importInBulk } from '../bulk-import.js';
import { KeyUseRecorder, type KeyUse } from '../key-use-recorder.js';
import { pendingMigrations } from '../migration.js';
import { PagedListing, parsePageJson, type PagedListingOptions } from '../paged-listing.js';
import { searchSync } from '../search-plan.js';
import { sqlitePageSource } from './sqlite-page-source.js';
import type {
  ApiKeyRecord,
  ContactPage,
  ContactPageJson,
  ContactStore,
  FoundContact,
  ImportRecord,
  KeyStore,
  KeyWithOwner,
  NewApiKey,
  NewUser,
  OwnerBatch,
  Store,
  StoreOptions,
  User,
  UserStore,
} from '../store.js';
import { SqliteBulkLoad } from './bulk-load.js';
import { SQLITE_MIGRATIONS } from './migrations.js';
import { sqliteSearchReads } from './sqlite-search.js';
import { SqliteWriteLock } from './write-lock.js';

type Row = Record<string, unknown>;

/** Statements are prepared on first use (after migrations have created the tables) and then reused. */
class Statements {
  private readonly cache = new Map<string, Database.Statement>();
  /** Set while `bulkImport` runs: imports then index their new contacts in bulk. */
  bulkLoad: SqliteBulkLoad | null = null;
  constructor(readonly db: Database.Database) {}

  get(sql: string): Database.Statement {
    let statement = this.cache.get(sql);
    if (!statement) {
      statement = this.db.prepare(sql);
      this.cache.set(sql, statement);
    }
    return statement;
  }
}

// A bulk load inserts random ids into several indexes at once: with SQLite's default 2 MB page cache each
// insert evicts pages the next one needs, and the transaction spills to the WAL over and over.
const BULK_CACHE_KIB = -1024 * 1024;

const JSON_COLUMNS = new Set(['tags', 'enrichment', 'research_data']);
const CONTACT_SELECT = CONTACT_COLUMNS.map((column) => `c.${column}`).join(', ');
const USER_COLUMNS = 'id, email, name, plan, created_at';
const KEY_COLUMNS = 'id, owner_id, label, scopes, created_at, expires_at, last_used_at, revoked_at';

/** Opens (creating if needed) the SQLite database at `path`, in WAL mode. */
export function openSqliteStore(path: string, options: StoreOptions = {}): Store {
  if (path !== ':memory:') mkdirSync(dirname(path), { recursive: true });
  const db = new Database(path);
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = NORMAL');
  db.pragma('foreign_keys = ON');
  const { onLongLockWait } = options;
  const writeLock = new SqliteWriteLock(db, {
    busyTimeoutMs: options.statementTimeoutMs ?? 5000,
    onLongWait: onLongLockWait && (() => onLongLockWait(longWaitNotice(path))),
  });
  return new SqliteStore(db, writeLock, { stateTtlMs: options.listingStateTtlMs });
}

function longWaitNotice(path: string): string {
  return `waiting for the database: another process is writing (${path}); this command goes on once it is done (Ctrl-C gives up)`;
}

class SqliteStore implements Store {
  readonly kind = 'sqlite';
  readonly users: UserStore;
  readonly keys: KeyStore;
  readonly contacts: ContactStore;

  private readonly statements: Statements;
  private readonly keyUses: KeyUseRecorder;

  constructor(
    private readonly db: Database.Database,
    private readonly writeLock: SqliteWriteLock,
    listingOptions: PagedListingOptions,
  ) {
    const statements = new Statements(db);
    this.statements = statements;
    this.keyUses = new KeyUseRecorder(async (uses) => recordKeyUsesIfFree(statements, writeLock, uses));
    this.users = new SqliteUserStore(statements, writeLock);
    this.keys = new SqliteKeyStore(statements, writeLock, this.keyUses);
    this.contacts = new SqliteContactStore(statements, writeLock, listingOptions);
  }

  async migrate(): Promise<number[]> {
    // Read first: with nothing to apply, a server or a command starts without waiting for another process's write.
    if (this.unappliedMigrations().length === 0) return [];
    // The write lock is taken first, so two processes migrating at once run one after the other.
    return this.writeLock.run(() => {
      this.db.exec(`CREATE TABLE IF NOT EXISTS schema_migrations (
        version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at TEXT NOT NULL)`);
      const pending = this.unappliedMigrations();
      for (const migration of pending) {
        this.db.exec(migration.sql);
        this.db
          .prepare('INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, ?)')
          .run(migration.version, migration.name, new Date().toISOString());
      }
      return pending.map((migration) => migration.version);
    });
  }

  private unappliedMigrations(): ReturnType<typeof pendingMigrations> {
    const table = this.db.prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'schema_migrations'").get();
    const rows = table ? (this.db.prepare('SELECT version FROM schema_migrations').all() as { version: number }[]) : [];
    return pendingMigrations(SQLITE_MIGRATIONS, new Set(rows.map((row) => row.version)));
  }

  async bulkImport(users: readonly NewUser[], batches: AsyncIterable<OwnerBatch>): Promise<{ usersCreated: number; contacts: number }> {
    // One connection in this process, so awaiting between statements inside BEGIN is safe; the stores' own
    // transactions nest as savepoints.
    const cacheSize = this.db.pragma('cache_size', { simple: true });
    this.db.pragma(`cache_size = ${BULK_CACHE_KIB}`);
    try {
      await this.writeLock.begin();
      const bulkLoad = SqliteBulkLoad.begin(this.db);
      this.statements.bulkLoad = bulkLoad;
      const result = await importInBulk(this, users, batches);
      bulkLoad.finish();
      this.db.exec('COMMIT');
      return result;
    } catch (error) {
      if (this.db.inTransaction) this.db.exec('ROLLBACK');
      throw error;
    } finally {
      this.statements.bulkLoad = null;
      this.db.pragma(`cache_size = ${cacheSize}`);
    }
  }

  async ping(): Promise<void> {
    this.db.prepare('SELECT 1').get();
  }

  async close(): Promise<void> {
    await this.keyUses.close();
    this.db.close();
  }
}

/** Writes the uses in one transaction if no other connection is writing; else leaves them all. */
function recordKeyUsesIfFree(statements: Statements, writeLock: SqliteWriteLock, uses: KeyUse[]): KeyUse[] {
  const touch = statements.get('UPDATE api_keys SET last_used_at = ? WHERE id = ? AND (last_used_at IS NULL OR last_used_at <= ?)');
  const recorded = writeLock.runIfFree(() => {
    for (const use of uses) touch.run(use.usedAt, use.keyId, use.unlessUsedAfter);
  });
  return recorded ? [] : uses;
}

class SqliteUserStore implements UserStore {
  constructor(
    private readonly statements: Statements,
    private readonly writeLock: SqliteWriteLock,
  ) {}

  async create(user: NewUser): Promise<User> {
    const now = new Date().toISOString();
    const created: User = { id: newId(), email: user.email, name: user.name, plan: user.plan, created_at: now };
    const insert = () => {
      this.statements
        .get('INSERT INTO users (id, email, name, plan, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?)')
        .run(created.id, created.email, created.name, created.plan, now, now);
      this.statements
        .get(
          `INSERT INTO contacts (id, owner_id, is_self, name, email, created_at, updated_at)
           VALUES (?, ?, 1, ?, ?, ?, ?)`,
        )
        .run(newId(), created.id, created.name, created.email, now, now);
    };
    try {
      await this.writeLock.run(insert);
    } catch (error) {
      if ((error as { code?: string }).code === 'SQLITE_CONSTRAINT_UNIQUE') {
        throw new InputError(`A user with email ${user.email} already exists`);
      }
      throw error;
    }
    return created;
  }

  async find(idOrEmail: string): Promise<User | null> {
    const row = isUuid(idOrEmail)
      ? this.statements.get(`SELECT ${USER_COLUMNS} FROM users WHERE id = ?`).get(idOrEmail.toLowerCase())
      : this.statements.get(`SELECT ${USER_COLUMNS} FROM users WHERE lower(email) = lower(?)`).get(idOrEmail);
    return (row as User | undefined) ?? null;
  }

  async setPlan(userId: string, plan: BillingPlan): Promise<User> {
    const row = await this.writeLock.run(() =>
      this.statements
        .get(`UPDATE users SET plan = ?, updated_at = ? WHERE id = ? RETURNING ${USER_COLUMNS}`)
        .get(plan, new Date().toISOString(), canonicalId(userId)),
    );
    if (!row) throw new NotFoundError(`No user with id ${userId}`);
    return row as User;
  }
}

class SqliteKeyStore implements KeyStore {
  constructor(
    private readonly statements: Statements,
    private readonly writeLock: SqliteWriteLock,
    private readonly uses: KeyUseRecorder,
  ) {}

  async create(key: NewApiKey): Promise<ApiKeyRecord> {
    const row = await this.writeLock.run(() =>
      this.statements
        .get(
          `INSERT INTO api_keys (id, owner_id, label, scopes, secret_hash, created_at, expires_at)
           VALUES (?, ?, ?, ?, ?, ?, ?) RETURNING ${KEY_COLUMNS}`,
        )
        .get(newId(), canonicalId(key.ownerId), key.label, JSON.stringify(key.scopes), key.secretHash, new Date().toISOString(), key.expiresAt),
    );
    return keyFromRow(row as Row);
  }

  async listForOwner(ownerId: string): Promise<ApiKeyRecord[]> {
    const rows = this.statements
      .get(`SELECT ${KEY_COLUMNS} FROM api_keys WHERE owner_id = ? ORDER BY created_at, id`)
      .all(canonicalId(ownerId)) as Row[];
    return rows.map(keyFromRow);
  }

  async revoke(keyId: string): Promise<ApiKeyRecord | null> {
    const row = await this.writeLock.run(() =>
      this.statements
        .get(`UPDATE api_keys SET revoked_at = coalesce(revoked_at, ?) WHERE id = ? RETURNING ${KEY_COLUMNS}`)
        .get(new Date().toISOString(), canonicalId(keyId)),
    );
    return row ? keyFromRow(row as Row) : null;
  }

  async findByHash(secretHash: string): Promise<KeyWithOwner | null> {
    const row = this.statements
      .get(
        `SELECT k.id, k.owner_id, k.label, k.scopes, k.created_at, k.expires_at, k.last_used_at, k.revoked_at,
                u.plan AS owner_plan
         FROM api_keys k JOIN users u ON u.id = k.owner_id
         WHERE k.secret_hash = ?`,
      )
      .get(secretHash) as Row | undefined;
    return row ? { key: keyFromRow(row), ownerPlan: row.owner_plan as BillingPlan } : null;
  }

  async touch(keyId: string, usedAt: string, unlessUsedAfter: string): Promise<void> {
    const id = canonicalId(keyId);
    if (id !== null) await this.uses.record({ keyId: id, usedAt, unlessUsedAfter });
  }
}

function keyFromRow(row: Row): ApiKeyRecord {
  return {
    id: row.id as string,
    owner_id: row.owner_id as string,
    label: row.label as string | null,
    scopes: JSON.parse(row.scopes as string) as Scope[],
    created_at: row.created_at as string,
    expires_at: row.expires_at as string | null,
    last_used_at: row.last_used_at as string | null,
    revoked_at: row.revoked_at as string | null,
  };
}

class SqliteContactStore implements ContactStore {
  private readonly listing: PagedListing;

  constructor(
    private readonly statements: Statements,
    private readonly writeLock: SqliteWriteLock,
    listingOptions: PagedListingOptions,
  ) {
    this.listing = new PagedListing(sqlitePageSource(statements.db, (sql) => statements.get(sql)), listingOptions);
  }

  async listPage(ownerId: string, page: PageRequest): Promise<ContactPage> {
    return parsePageJson<Contact>(await this.listPageJson(ownerId, page));
  }

  async listPageJson(ownerId: string, page: PageRequest): Promise<ContactPageJson> {
    return this.listing.read(ownerId, page);
  }

  async get(ownerId: string, id: string): Promise<FoundContact | null> {
    if (!isUuid(id)) return null;
    const askedId = id.toLowerCase();
    const row = this.statements.get(GET_CONTACT_SQL).get({ owner: ownerId, id: askedId }) as Row | undefined;
    if (!row) return null;
    const { is_self: isSelf, merged_into: mergedInto, ...contact } = row;
    return mergeChainResult(askedId, {
      contact: decodeContact(contact),
      is_self: isSelf === 1,
      merged_into: mergedInto as string | null,
    });
  }

  async search(ownerId: string, query: string, limit: number): Promise<Contact[]> {
    const request = parseSearchRequest({ query, limit });
    const matcher = searchMatcher(request.query);
    const prepare = (sql: string) => this.statements.get(sql);
    // One read transaction: the index lookups, the walk and the rows read agree on one snapshot.
    const rows = this.statements.db.transaction(() =>
      searchSync(sqliteSearchReads(prepare, ownerId, matcher.words), matcher, request.limit).map(
        (found) => prepare(CONTACT_BY_ROWID_SQL).get(found.row_id) as Row,
      ),
    )();
    return rows.map(decodeContact);
  }

  async importContacts(ownerId: string, records: readonly ImportRecord[]): Promise<number> {
    const now = new Date().toISOString();
    const findExisting = this.statements.get('SELECT owner_id, is_self FROM contacts WHERE id = ?');
    const insert = this.statements.get(
      `INSERT INTO contacts (id, owner_id, ${CONTACT_VALUE_COLUMNS.join(', ')})
       VALUES (?, ?, ${CONTACT_VALUE_COLUMNS.map(() => '?').join(', ')})`,
    );
    await this.writeLock.run(() => {
      for (const record of records) {
        const found = record.contact.id === null ? undefined : (findExisting.get(record.contact.id) as Row | undefined);
        const existing: ExistingContact | undefined = found && {
          owner_id: found.owner_id as string,
          is_self: found.is_self === 1,
        };
        const write = decideContactWrite(ownerId, record, existing, now);
        if (write.kind === 'insert') {
          insert.run(write.id, ownerId, ...CONTACT_VALUE_COLUMNS.map((column) => encodeValue(column, write.values[column])));
          continue;
        }
        const columns = CONTACT_VALUE_COLUMNS.filter((column) => column in write.values);
        const sql = `UPDATE contacts SET ${columns.map((column) => `${column} = ?`).join(', ')} WHERE id = ? AND owner_id = ?`;
        this.statements.get(sql).run(...columns.map((column) => encodeValue(column, write.values[column])), write.id, ownerId);
      }
      this.statements.bulkLoad?.indexNewContacts();
      for (const { label, contact } of records) {
        if (contact.mergedInto === undefined) continue;
        try {
          this.mergeNow(ownerId, contact.id!, contact.mergedInto, now, 'no-op');
        } catch (error) {
          throw error instanceof InputError ? new InputError(`${label}: ${error.message}`) : error;
        }
      }
    });
    return records.length;
  }

  async merge(ownerId: string, duplicateId: string, survivorId: string): Promise<void> {
    await this.writeLock.run(() => this.mergeNow(ownerId, duplicateId, survivorId, new Date().toISOString()));
  }

  private mergeNow(ownerId: string, duplicateId: string, survivorId: string, now: string, repeat: RepeatedMerge = 'refuse'): void {
    const find = this.statements.get('SELECT id, is_self, merged_into FROM contacts WHERE owner_id = ? AND id = ?');
    const candidate = (id: string): MergeCandidate | undefined => {
      const row = isUuid(id) ? (find.get(ownerId, id.toLowerCase()) as Row | undefined) : undefined;
      return row && { id: row.id as string, is_self: row.is_self === 1, merged_into: row.merged_into as string | null };
    };
    const duplicate = candidate(duplicateId);
    const survivor = candidate(survivorId);
    if (isRepeatedMerge(duplicate, survivorId) && repeat === 'no-op') return;
    assertMergeAllowed(duplicateId, survivorId, duplicate, survivor);
    // Contacts merged earlier into the duplicate follow it to the survivor, so chains stay one step long.
    // Two statements, each on its own index: SQLite plans `id = ? OR merged_into = ?` as a scan of the owner's rows.
    this.statements
      .get('UPDATE contacts SET merged_into = ?, updated_at = ? WHERE owner_id = ? AND merged_into = ?')
      .run(survivor!.id, now, ownerId, duplicate!.id);
    this.statements
      .get('UPDATE contacts SET merged_into = ?, updated_at = ? WHERE owner_id = ? AND id = ?')
      .run(survivor!.id, now, ownerId, duplicate!.id);
  }
}

/** The end of the merge chain from the id asked for, in one statement (one snapshot). */
const GET_CONTACT_SQL = `
  WITH RECURSIVE chain (id, hops) AS (
    SELECT id, 0 FROM contacts WHERE owner_id = @owner AND id = @id
    UNION ALL
    SELECT c.merged_into, chain.hops + 1 FROM chain JOIN contacts c ON c.owner_id = @owner AND c.id = chain.id
    WHERE c.merged_into IS NOT NULL AND chain.hops < ${MAX_MERGE_HOPS}
  )
  SELECT ${CONTACT_SELECT}, c.is_self, c.merged_into FROM contacts c
  WHERE c.owner_id = @owner AND c.id = (SELECT id FROM chain ORDER BY hops DESC LIMIT 1)`;

const CONTACT_BY_ROWID_SQL = `SELECT ${CONTACT_SELECT} FROM contacts c WHERE c.rowid = ?`;

function encodeValue(column: keyof ContactValues, value: unknown): unknown {
  if (value === undefined || value === null) return null;
  return JSON_COLUMNS.has(column) ? JSON.stringify(value) : value;
}

function decodeContact(row: Row): ReturnType<typeof contactFromRow> {
  for (const column of JSON_COLUMNS) {
    if (row[column] !== null) row[column] = JSON.parse(row[column] as string);
  }
  return contactFromRow(row as ContactRow);
}
