import { AsyncLocalStorage } from 'node:async_hooks';
import pg from 'pg';
import { InputError, NotFoundError } from '../../domain/errors.js';
import { isUuid, newId } from '../../domain/ids.js';
import { assertMergeAllowed, isRepeatedMerge, type MergeCandidate, type RepeatedMerge } from '../../domain/merge.js';
import type { Contact } from '../../domain/contact.js';
import type { PageRequest } from '../../domain/pagination.js';
import type { BillingPlan } from '../../domain/billing-plan.js';
import { parseSearchRequest, searchMatcher } from '../../domain/search.js';
import { mergeChainResult, MAX_MERGE_HOPS } from '../merge-chain.js';
import { CONTACT_COLUMNS, CONTACT_VALUE_COLUMNS, contactFromRow, type ContactRow } from '../contact-row.js';
import { decideContactWrite, type ContactWrite, type ExistingContact } from '../contact-write.js';
import { importInBulk } from '../bulk-import.js';
import { KeyUseRecorder, type KeyUse } from '../key-use-recorder.js';
import { pendingMigrations } from '../migration.js';
import { PagedListing, parsePageJson, type PagedListingOptions } from '../paged-listing.js';
import { searchAsync } from '../search-plan.js';
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
  PoolStats,
  Store,
  StoreOptions,
  User,
  UserStore,
} from '../store.js';
import { POSTGRES_MIGRATIONS } from './migrations.js';
import { postgresPageSource } from './postgres-page-source.js';
import { postgresSearchReads } from './postgres-search.js';

type ContactValueColumn = (typeof CONTACT_VALUE_COLUMNS)[number];

/** PostgreSQL type of each column an import writes; parameters are cast to it. */
const COLUMN_TYPES: Record<ContactValueColumn, string> = {
  name: 'text',
  email: 'text',
  phone: 'text',
  company: 'text',
  title: 'text',
  school: 'text',
  linkedin_url: 'text',
  location: 'text',
  description: 'text',
  tags: 'text[]',
  enrichment: 'jsonb',
  enriched_at: 'timestamptz',
  source: 'text',
  birthday: 'text',
  research_data: 'jsonb',
  researched_at: 'timestamptz',
  created_at: 'timestamptz',
  updated_at: 'timestamptz',
};
const JSONB_COLUMNS = ['enrichment', 'research_data'] as const;

const USER_COLUMNS = 'id, email, name, plan, created_at';
const KEY_COLUMNS = 'id, owner_id, label, scopes, created_at, expires_at, last_used_at, revoked_at';
const LISTABLE = 'owner_id = $1 AND merged_into IS NULL AND NOT is_self';

/** During an import: existing ids looked up per query, contacts inserted or updated per statement. */
const LOOKUP_BATCH = 1000;
const INSERT_BATCH = 1000;
const UPDATE_BATCH = 1000;
/** Key of the transaction-level advisory lock that serializes concurrent migrate() calls. */
const MIGRATION_LOCK_KEY = 7_283_610_041;

const TIMESTAMPTZ_OID = 1184;
/** timestamptz output in the ISO DateStyle: `2024-05-01 09:30:00.123456+00`, offset possibly `+05:30[:ss]`, maybe ` BC`. */
const TIMESTAMPTZ_TEXT =
  /^(\d{4,})-(\d{2})-(\d{2}) (\d{2}):(\d{2}):(\d{2})(?:\.(\d+))?([+-]\d{2})(?::(\d{2}))?(?::(\d{2}))?( BC)?$/;

/**
 * Turns timestamptz text into the service's canonical form, ISO 8601 UTC with exactly milliseconds
 * (`2024-05-01T09:30:00.123Z`); microseconds are truncated. Other session time zones are converted.
 */
export function parseTimestamptz(text: string): string {
  const match = TIMESTAMPTZ_TEXT.exec(text);
  if (!match) throw new Error(`Unexpected timestamptz value "${text}"`);
  const [, year = '', month = '', day = '', hour = '', minute = '', second = '', fraction = ''] = match;
  const [offsetHours = '', offsetMinutes = '00', offsetSeconds = '00', bc] = match.slice(8);
  const millis = fraction.padEnd(3, '0').slice(0, 3);
  const utc = offsetHours === '+00' && offsetMinutes === '00' && offsetSeconds === '00';
  if (utc && bc === undefined && year.length === 4) {
    return `${year}-${month}-${day}T${hour}:${minute}:${second}.${millis}Z`;
  }
  const local = new Date(0);
  local.setUTCFullYear(bc === undefined ? Number(year) : 1 - Number(year), Number(month) - 1, Number(day));
  local.setUTCHours(Number(hour), Number(minute), Number(second), Number(millis));
  const sign = offsetHours.startsWith('-') ? -1 : 1;
  const offsetMs = sign * (Math.abs(Number(offsetHours)) * 3600 + Number(offsetMinutes) * 60 + Number(offsetSeconds)) * 1000;
  return new Date(local.getTime() - offsetMs).toISOString();
}

/** Per-pool type parsers (the global pg.types stay untouched): only timestamptz text differs from pg's defaults. */
const POOL_TYPES: pg.CustomTypesConfig = {
  getTypeParser(oid, format) {
    if (oid === TIMESTAMPTZ_OID && format !== 'binary') return parseTimestamptz;
    return pg.types.getTypeParser(oid, format);
  },
};

/** Connects lazily to the PostgreSQL database at `url`; run migrate() before use. */
export function openPostgresStore(url: string, options: StoreOptions = {}): Store {
  const pool = new pg.Pool({
    connectionString: url,
    max: 10,
    connectionTimeoutMillis: 5_000,
    // Timestamps come back in UTC (parseTimestamptz would convert any other zone, but this keeps the fast path).
    options: '-c TimeZone=UTC',
    // Server-side, so a runaway query is cancelled by PostgreSQL and its connection stays usable.
    statement_timeout: options.statementTimeoutMs,
    types: POOL_TYPES,
  });
  // An idle connection that breaks (server restart, network) is dropped by the pool; without a listener
  // the 'error' event would crash the process. The next query simply opens a new connection.
  pool.on('error', () => {});
  return new PostgresStore(pool, { stateTtlMs: options.listingStateTtlMs });
}

/** The transaction a bulk load runs in: store calls made inside it join it instead of opening their own. */
const ambientTransaction = new AsyncLocalStorage<pg.PoolClient>();

/** Where a query goes: the bulk load's transaction when inside one, else the pool. */
function queryable(pool: pg.Pool): pg.Pool | pg.PoolClient {
  return ambientTransaction.getStore() ?? pool;
}

/** Runs `work` in BEGIN … COMMIT (`begin` may set the mode) on one connection, rolling back when anything throws. */
async function inTransaction<T>(pool: pg.Pool, work: (client: pg.PoolClient) => Promise<T>, begin = 'BEGIN'): Promise<T> {
  const joined = ambientTransaction.getStore();
  if (joined) return work(joined);
  const client = await pool.connect();
  let broken: Error | undefined;
  try {
    await client.query(begin);
    const result = await work(client);
    await client.query('COMMIT');
    return result;
  } catch (error) {
    try {
      await client.query('ROLLBACK');
    } catch (rollbackError) {
      broken = rollbackError instanceof Error ? rollbackError : new Error(String(rollbackError));
    }
    throw error;
  } finally {
    // A connection whose rollback failed is in an unknown state: the pool destroys it instead of reusing it.
    client.release(broken);
  }
}

function isUniqueViolation(error: unknown): boolean {
  return (error as { code?: unknown } | null)?.code === '23505';
}

class PostgresStore implements Store {
  readonly kind = 'postgres';
  readonly users: UserStore;
  readonly keys: KeyStore;
  readonly contacts: ContactStore;
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
  }

  async migrate(): Promise<number[]> {
    return inTransaction(this.pool, async (client) => {
      // Taken before anything else, so two processes migrating at once run one after the other.
      await client.query(`SELECT pg_advisory_xact_lock(${MIGRATION_LOCK_KEY})`);
      // A migration may rightly run longer than the statement timeout meant for requests.
      await client.query('SET LOCAL statement_timeout = 0');
      await client.query(`CREATE TABLE IF NOT EXISTS schema_migrations (
        version integer PRIMARY KEY, name text NOT NULL, applied_at timestamptz NOT NULL)`);
      const { rows } = await client.query<{ version: number }>('SELECT version FROM schema_migrations');
      const pending = pendingMigrations(POSTGRES_MIGRATIONS, new Set(rows.map((row) => row.version)));
      for (const migration of pending) {
        await client.query(migration.sql);
        await client.query('INSERT INTO schema_migrations (version, name, applied_at) VALUES ($1, $2, $3)', [
          migration.version,
          migration.name,
          new Date().toISOString(),
        ]);
      }
      return pending.map((migration) => migration.version);
    });
  }

  async ping(): Promise<void> {
    await this.pool.query('SELECT 1');
  }

  poolStats(): PoolStats {
    return { total: this.pool.totalCount, idle: this.pool.idleCount, waiting: this.pool.waitingCount };
  }

  async bulkImport(users: readonly NewUser[], batches: AsyncIterable<OwnerBatch>): Promise<{ usersCreated: number; contacts: number }> {
    const result = await inTransaction(this.pool, (client) => ambientTransaction.run(client, () => importInBulk(this, users, batches)));
    // Fresh statistics for the planner, and a visibility map that lets the listing index answer without
    // visiting the table: autovacuum would get there, minutes later.
    await this.pool.query('VACUUM (ANALYZE) contacts');
    return result;
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await this.keyUses.close();
    await this.pool.end();
  }
}

class PostgresUserStore implements UserStore {
  constructor(private readonly pool: pg.Pool) {}

  async create(user: NewUser): Promise<User> {
    const now = new Date().toISOString();
    const created: User = { id: newId(), email: user.email, name: user.name, plan: user.plan, created_at: now };
    try {
      await inTransaction(this.pool, async (client) => {
        await client.query(
          `INSERT INTO users (id, email, name, plan, created_at, updated_at)
           VALUES ($1::uuid, $2::text, $3::text, $4::text, $5::timestamptz, $5::timestamptz)`,
          [created.id, created.email, created.name, created.plan, now],
        );
        await client.query(
          `INSERT INTO contacts (id, owner_id, is_self, name, email, created_at, updated_at)
           VALUES ($1::uuid, $2::uuid, true, $3::text, $4::text, $5::timestamptz, $5::timestamptz)`,
          [newId(), created.id, created.name, created.email, now],
        );
      });
    } catch (error) {
      if (isUniqueViolation(error)) throw new InputError(`A user with email ${user.email} already exists`);
      throw error;
    }
    return created;
  }

  async find(idOrEmail: string): Promise<User | null> {
    const db = queryable(this.pool);
    const { rows } = isUuid(idOrEmail)
      ? await db.query<User>(`SELECT ${USER_COLUMNS} FROM users WHERE id = $1::uuid`, [idOrEmail])
      : await db.query<User>(`SELECT ${USER_COLUMNS} FROM users WHERE lower(email) = lower($1::text)`, [
          idOrEmail,
        ]);
    return rows[0] ?? null;
  }

  async setPlan(userId: string, plan: BillingPlan): Promise<User> {
    const { rows } = isUuid(userId)
      ? await this.pool.query<User>(
          `UPDATE users SET plan = $1::text, updated_at = $2::timestamptz WHERE id = $3::uuid RETURNING ${USER_COLUMNS}`,
          [plan, new Date().toISOString(), userId],
        )
      : { rows: [] };
    const row = rows[0];
    if (!row) throw new NotFoundError(`No user with id ${userId}`);
    return row;
  }
}

class PostgresKeyStore implements KeyStore {
  constructor(
    private readonly pool: pg.Pool,
    private readonly uses: KeyUseRecorder,
  ) {}

  async create(key: NewApiKey): Promise<ApiKeyRecord> {
    const { rows } = await this.pool.query<ApiKeyRecord>(
      `INSERT INTO api_keys (id, owner_id, label, scopes, secret_hash, created_at, expires_at)
       VALUES ($1::uuid, $2::uuid, $3::text, $4::text[], $5::text, $6::timestamptz, $7::timestamptz)
       RETURNING ${KEY_COLUMNS}`,
      [newId(), key.ownerId, key.label, key.scopes, key.secretHash, new Date().toISOString(), key.expiresAt],
    );
    return rows[0]!;
  }

  async listForOwner(ownerId: string): Promise<ApiKeyRecord[]> {
    if (!isUuid(ownerId)) return [];
    const { rows } = await this.pool.query<ApiKeyRecord>(
      `SELECT ${KEY_COLUMNS} FROM api_keys WHERE owner_id = $1::uuid ORDER BY created_at, id`,
      [ownerId],
    );
    return rows;
  }

  async revoke(keyId: string): Promise<ApiKeyRecord | null> {
    if (!isUuid(keyId)) return null;
    const { rows } = await this.pool.query<ApiKeyRecord>(
      `UPDATE api_keys SET revoked_at = coalesce(revoked_at, $1::timestamptz) WHERE id = $2::uuid
       RETURNING ${KEY_COLUMNS}`,
      [new Date().toISOString(), keyId],
    );
    return rows[0] ?? null;
  }

  async findByHash(secretHash: string): Promise<KeyWithOwner | null> {
    const { rows } = await this.pool.query<ApiKeyRecord & { owner_plan: BillingPlan }>({
      name: 'api_keys_find_by_hash',
      text: `SELECT k.id, k.owner_id, k.label, k.scopes, k.created_at, k.expires_at, k.last_used_at, k.revoked_at,
                    u.plan AS owner_plan
             FROM api_keys k JOIN users u ON u.id = k.owner_id
             WHERE k.secret_hash = $1::text`,
      values: [secretHash],
    });
    const row = rows[0];
    if (!row) return null;
    const { owner_plan: ownerPlan, ...key } = row;
    return { key, ownerPlan };
  }

  async touch(keyId: string, usedAt: string, unlessUsedAfter: string): Promise<void> {
    if (isUuid(keyId)) await this.uses.record({ keyId, usedAt, unlessUsedAfter });
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

async function recordKeyUsesUnlessLocked(pool: pg.Pool, uses: KeyUse[]): Promise<KeyUse[]> {
  const { rows } = await pool.query<{ id: string }>({
    name: 'api_keys_record_uses',
    text: RECORD_KEY_USES_SQL,
    values: [uses.map((use) => use.keyId), uses.map((use) => use.usedAt), uses.map((use) => use.unlessUsedAfter)],
  });
  const skipped = new Set(rows.map((row) => row.id));
  return uses.filter((use) => skipped.has(use.keyId));
}

/** The end of the merge chain from the id asked for, in one statement (one snapshot). */
const GET_CONTACT_SQL = `
  WITH RECURSIVE chain (id, hops) AS (
    SELECT id, 0 FROM contacts WHERE owner_id = $1::uuid AND id = $2::uuid
    UNION ALL
    SELECT c.merged_into, chain.hops + 1 FROM chain JOIN contacts c ON c.owner_id = $1::uuid AND c.id = chain.id
    WHERE c.merged_into IS NOT NULL AND chain.hops < ${MAX_MERGE_HOPS}
  )
  SELECT ${CONTACT_COLUMNS.map((column) => `c.${column}`).join(', ')}, c.is_self, c.merged_into
  FROM chain JOIN contacts c ON c.owner_id = $1::uuid AND c.id = chain.id
  ORDER BY chain.hops DESC LIMIT 1`;

/** The chosen contacts of a search, read in full. */
const SEARCH_ROWS_SQL = `SELECT ${CONTACT_COLUMNS.join(', ')} FROM contacts WHERE ${LISTABLE} AND id = ANY($2::uuid[])`;

/**
 * Every statement on an owner's contacts ends by updating the owner's listing row (triggers, migration 3), held
 * to commit. A write transaction locks that row before any contact, so store writes of one owner queue on it
 * instead of deadlocking: an import holding it while a merge holds a contact the import updates next, or two
 * imports updating the same contacts in different orders.
 */
async function lockOwnerListing(client: pg.PoolClient, ownerId: string): Promise<void> {
  if (isUuid(ownerId)) await client.query('SELECT 1 FROM owner_listing WHERE owner_id = $1::uuid FOR NO KEY UPDATE', [ownerId]);
}

const MERGE_CANDIDATE_SQL = 'SELECT id, is_self, merged_into FROM contacts WHERE owner_id = $1::uuid AND id = $2::uuid FOR UPDATE';

/**
 * Rows for a multi-row statement: `unnest($2::uuid[], $3::text[], …) AS u(id, …)` zips one array parameter
 * per column ($1 is the owner). Tags travel as text[] literals, one per row, and are cast back in `value`.
 */
function unnestRows(columns: readonly ContactValueColumn[]): { source: string; value: (column: ContactValueColumn) => string } {
  const arrays = columns.map((column, index) => `$${index + 3}::${column === 'tags' ? 'text' : COLUMN_TYPES[column]}[]`);
  return {
    source: `unnest($2::uuid[], ${arrays.join(', ')}) AS u(id, ${columns.join(', ')})`,
    value: (column) => (column === 'tags' ? 'u.tags::text[]' : `u.${column}`),
  };
}

const INSERT_ROWS = unnestRows(CONTACT_VALUE_COLUMNS);
const INSERT_SQL = `INSERT INTO contacts (id, owner_id, ${CONTACT_VALUE_COLUMNS.join(', ')})
  SELECT u.id, $1::uuid, ${CONTACT_VALUE_COLUMNS.map(INSERT_ROWS.value).join(', ')} FROM ${INSERT_ROWS.source}`;

function updateSql(columns: readonly ContactValueColumn[]): string {
  const rows = unnestRows(columns);
  return `UPDATE contacts AS c SET ${columns.map((column) => `${column} = ${rows.value(column)}`).join(', ')}
  FROM ${rows.source} WHERE c.id = u.id AND c.owner_id = $1::uuid`;
}

class PostgresContactStore implements ContactStore {
  private readonly listing: PagedListing;

  constructor(
    private readonly pool: pg.Pool,
    listingOptions: PagedListingOptions,
  ) {
    this.listing = new PagedListing(postgresPageSource(pool), listingOptions);
  }

  async listPage(ownerId: string, page: PageRequest): Promise<ContactPage> {
    return parsePageJson<Contact>(await this.listPageJson(ownerId, page));
  }

  async listPageJson(ownerId: string, page: PageRequest): Promise<ContactPageJson> {
    return this.listing.read(ownerId, page);
  }

  async get(ownerId: string, id: string): Promise<FoundContact | null> {
    if (!isUuid(ownerId) || !isUuid(id)) return null;
    const askedId = id.toLowerCase();
    const { rows } = await this.pool.query<ContactRow & { is_self: boolean; merged_into: string | null }>({
      name: 'contacts_get',
      text: GET_CONTACT_SQL,
      values: [ownerId, askedId],
    });
    const row = rows[0];
    if (!row) return null;
    const { is_self, merged_into, ...contact } = row;
    return mergeChainResult(askedId, { contact: contactFromRow(contact), is_self, merged_into });
  }

  async search(ownerId: string, query: string, limit: number): Promise<Contact[]> {
    const request = parseSearchRequest({ query, limit });
    const matcher = searchMatcher(request.query);
    if (!isUuid(ownerId) || matcher.words.length === 0) return [];
    // One snapshot for the index lookups, the walk and the rows read.
    return inTransaction(
      this.pool,
      async (client) => {
        const found = await searchAsync(postgresSearchReads(client, ownerId, matcher.words), matcher, request.limit);
        if (found.length === 0) return [];
        const { rows } = await client.query<ContactRow>({
          name: 'contacts_search_rows',
          text: SEARCH_ROWS_SQL,
          values: [ownerId, found.map((contact) => contact.id)],
        });
        const byId = new Map(rows.map((row) => [row.id, row]));
        // Inside a bulk load's transaction (no snapshot of its own) a contact may have gone meanwhile.
        return found.flatMap((contact) => {
          const row = byId.get(contact.id);
          return row ? [contactFromRow(row)] : [];
        });
      },
      'BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY',
    );
  }

  async importContacts(ownerId: string, records: readonly ImportRecord[]): Promise<number> {
    const now = new Date().toISOString();
    await inTransaction(this.pool, async (client) => {
      await lockOwnerListing(client, ownerId);
      const writer = new ContactWriter(client, ownerId);
      for (let start = 0; start < records.length; start += LOOKUP_BATCH) {
        const batch = records.slice(start, start + LOOKUP_BATCH);
        const found = await findExisting(client, batch);
        for (const record of batch) {
          const id = record.contact.id?.toLowerCase() ?? null;
          // A contact this import already wrote counts as existing, exactly as when records are written one by one.
          const existing = id === null ? undefined : (writer.written(id) ?? found.get(id));
          const write = decideContactWrite(ownerId, record, existing, now);
          assertStorable(record);
          await writer.write(write);
        }
      }
      await writer.flush();
      for (const { label, contact } of records) {
        if (contact.mergedInto === undefined) continue;
        try {
          await mergeWith(client, ownerId, contact.id!, contact.mergedInto, now, 'no-op');
        } catch (error) {
          throw error instanceof InputError ? new InputError(`${label}: ${error.message}`) : error;
        }
      }
    });
    return records.length;
  }

  async merge(ownerId: string, duplicateId: string, survivorId: string): Promise<void> {
    await inTransaction(this.pool, async (client) => {
      await lockOwnerListing(client, ownerId);
      await mergeWith(client, ownerId, duplicateId, survivorId, new Date().toISOString());
    });
  }
}

async function mergeWith(
  client: pg.PoolClient,
  ownerId: string,
  duplicateId: string,
  survivorId: string,
  now: string,
  repeat: RepeatedMerge = 'refuse',
): Promise<void> {
  const found = new Map<string, MergeCandidate>();
  // Locked in id order, so two merges of the same pair in opposite directions cannot deadlock.
  const ids = [...new Set([duplicateId, survivorId].filter(isUuid).map((id) => id.toLowerCase()))].sort();
  for (const id of isUuid(ownerId) ? ids : []) {
    const { rows } = await client.query<MergeCandidate>(MERGE_CANDIDATE_SQL, [ownerId, id]);
    if (rows[0]) found.set(id, rows[0]);
  }
  const candidate = (id: string): MergeCandidate | undefined => (isUuid(id) ? found.get(id.toLowerCase()) : undefined);
  const duplicate = candidate(duplicateId);
  const survivor = candidate(survivorId);
  if (isRepeatedMerge(duplicate, survivorId) && repeat === 'no-op') return;
  assertMergeAllowed(duplicateId, survivorId, duplicate, survivor);
  // Contacts merged earlier into the duplicate follow it to the survivor, so chains stay one step long.
  await client.query(
    `UPDATE contacts SET merged_into = $1::uuid, updated_at = $2::timestamptz
     WHERE owner_id = $3::uuid AND (id = $4::uuid OR merged_into = $4::uuid)`,
    [survivor!.id, now, ownerId, duplicate!.id],
  );
}

/** Who holds each UUID id of the batch, whatever the owner. */
async function findExisting(
  client: pg.PoolClient,
  records: readonly ImportRecord[],
): Promise<Map<string, ExistingContact>> {
  const ids = records.flatMap(({ contact }) => (contact.id !== null && isUuid(contact.id) ? [contact.id] : []));
  const found = new Map<string, ExistingContact>();
  if (ids.length === 0) return found;
  const { rows } = await client.query<ExistingContact & { id: string }>(
    'SELECT id, owner_id, is_self FROM contacts WHERE id = ANY($1::uuid[])',
    [ids],
  );
  for (const { id, owner_id, is_self } of rows) found.set(id, { owner_id, is_self });
  return found;
}

const UNSTORABLE_IN_JSONB = /\u0000|[\uD800-\uDFFF]/u;

/** Refuses what the uuid and jsonb columns cannot hold, naming the record, instead of failing a whole batch. */
function assertStorable(record: ImportRecord): void {
  const { id, values } = record.contact;
  if (id !== null && !isUuid(id)) throw new InputError(`${record.label}: field "id" must be a UUID; got "${id}"`);
  for (const field of JSONB_COLUMNS) {
    const value = values[field];
    if (value !== undefined && value !== null && !jsonbCanStore(value)) {
      throw new InputError(`${record.label}: field "${field}" must not contain NUL characters or unpaired surrogates`);
    }
  }
}

/** jsonb refuses \u0000 and unpaired UTF-16 surrogates anywhere in its strings or keys. */
function jsonbCanStore(value: unknown): boolean {
  if (typeof value === 'string') return !UNSTORABLE_IN_JSONB.test(value);
  if (Array.isArray(value)) return value.every(jsonbCanStore);
  if (typeof value === 'object' && value !== null) {
    return Object.entries(value).every(([key, item]) => !UNSTORABLE_IN_JSONB.test(key) && jsonbCanStore(item));
  }
  return true;
}

/** Writes waiting to be sent as one statement; `ids` are lower-cased. */
interface Batch {
  mask: number;
  writes: ContactWrite[];
  ids: Set<string>;
}

const emptyBatch = (mask = 0): Batch => ({ mask, writes: [], ids: new Set() });

/**
 * Writes an import's contacts with the outcome of writing each record in turn, but in multi-row statements:
 * inserts are buffered; updates are buffered while they set the same columns (only those the record names).
 * Writes to different contacts commute, so a buffer is sent early only when order matters: before an update
 * of a contact still buffered (for insert or update), or when the updated columns change.
 */
class ContactWriter {
  private readonly insertedIds = new Set<string>();
  private inserts = emptyBatch();
  private updates = emptyBatch();

  constructor(
    private readonly client: pg.PoolClient,
    private readonly ownerId: string,
  ) {}

  /** The contact this import inserted under `id`, if any. */
  written(id: string): ExistingContact | undefined {
    return this.insertedIds.has(id) ? { owner_id: this.ownerId, is_self: false } : undefined;
  }

  async write(write: ContactWrite): Promise<void> {
    const id = write.id.toLowerCase();
    if (write.kind === 'insert') {
      this.insertedIds.add(id);
      add(this.inserts, write, id);
      if (this.inserts.writes.length >= INSERT_BATCH) await this.flushInserts();
      return;
    }
    if (this.inserts.ids.has(id)) await this.flushInserts();
    const mask = CONTACT_VALUE_COLUMNS.reduce((bits, column, index) => (column in write.values ? bits | (1 << index) : bits), 0);
    if (this.updates.ids.has(id) || mask !== this.updates.mask) await this.flushUpdates(mask);
    add(this.updates, write, id);
    if (this.updates.writes.length >= UPDATE_BATCH) await this.flushUpdates(mask);
  }

  async flush(): Promise<void> {
    await this.flushInserts();
    await this.flushUpdates(0);
  }

  private async flushInserts(): Promise<void> {
    const { writes } = this.inserts;
    this.inserts = emptyBatch();
    if (writes.length > 0) await this.send('contacts_import_insert', INSERT_SQL, CONTACT_VALUE_COLUMNS, writes);
  }

  private async flushUpdates(nextMask: number): Promise<void> {
    const { mask, writes } = this.updates;
    this.updates = emptyBatch(nextMask);
    if (writes.length === 0) return;
    const columns = CONTACT_VALUE_COLUMNS.filter((_, index) => (mask & (1 << index)) !== 0);
    await this.send(`contacts_import_update_${mask.toString(16)}`, updateSql(columns), columns, writes);
  }

  private async send(name: string, text: string, columns: readonly ContactValueColumn[], writes: ContactWrite[]): Promise<void> {
    await this.client.query({
      name,
      text,
      values: [
        this.ownerId,
        writes.map((write) => write.id),
        ...columns.map((column) => writes.map((write) => encodeParameter(column, write.values[column]))),
      ],
    });
  }
}

function add(batch: Batch, write: ContactWrite, id: string): void {
  batch.writes.push(write);
  batch.ids.add(id);
}

/** One row's value in a column array: JSON text for jsonb, a text[] literal (`{"a","b \\"c\\""}`) for tags. */
function encodeParameter(column: ContactValueColumn, value: unknown): string | null {
  if (value === undefined || value === null) return null;
  if (column === 'tags') return `{${(value as string[]).map((tag) => `"${tag.replace(/[\\"]/g, '\\$&')}"`).join(',')}}`;
  return COLUMN_TYPES[column] === 'jsonb' ? JSON.stringify(value) : (value as string);
}
