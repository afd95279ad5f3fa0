import type pg from 'pg';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import type { PoolerSetting } from '../../src/domain/database-url.js';
import type { StoreOptions } from '../../src/store/contracts/store-options.js';
import { openPool } from '../../src/store/postgres/connection.js';
import { postgresPageSource } from '../../src/store/postgres/page-source.js';
import { sessionModeOf } from '../../src/store/postgres/pooler.js';
import { inTransaction } from '../../src/store/postgres/transaction.js';
import { createTestDatabase, withAdmin, type TestDatabase } from '../support/backends.js';
import { contactRecord, createUser } from '../support/seed.js';

const postgresAdminUrl = inject('postgresAdminUrl');
const pgbouncerUrl = inject('pgbouncerUrl');

/** What one connection of a pool shows of its session, read on that connection (a pool of one). */
async function sessionOf(pool: pg.Pool): Promise<{ timeZone: string; statementTimeout: string; prepared: string[] }> {
  const { rows } = await pool.query<{ time_zone: string; statement_timeout: string; prepared: string[] }>(
    `SELECT current_setting('TimeZone') AS time_zone, current_setting('statement_timeout') AS statement_timeout,
       ARRAY(SELECT name FROM pg_prepared_statements ORDER BY name) AS prepared`,
  );
  const [row] = rows;
  return { timeZone: row!.time_zone, statementTimeout: row!.statement_timeout, prepared: row!.prepared };
}

/** A pool of one connection to the database, with the server's statement timeout of 5 s. */
function poolOfOne(database: TestDatabase, options: StoreOptions = {}): pg.Pool {
  return openPool(database.databaseUrl, { statementTimeoutMs: 5_000, pool: { size: 1, queueLimit: 10 }, ...options });
}

/** A page, the owner's state and sort keys: statements the store names on a direct connection. */
async function readAPage(pool: pg.Pool, ownerId: string): Promise<void> {
  const pages = postgresPageSource(pool);
  await pages.state(ownerId);
  await pages.page(ownerId, null, 0, 10);
  await pages.sortKeys(ownerId, 2, null, 3);
}

describe('the session mode rule (pooler.ts)', () => {
  it('is direct only when the startup key names the server process that answers', () => {
    expect(sessionModeOf({ announcedPid: 4242, serverPid: 4242 })).toBe('direct');
    // PgBouncer gives every client a random key of its own.
    expect(sessionModeOf({ announcedPid: -1044673867, serverPid: 4242 })).toBe('pooled');
    expect(sessionModeOf({ announcedPid: null, serverPid: 4242 })).toBe('pooled');
  });
});

describe.runIf(postgresAdminUrl !== null)('a PostgreSQL pool, connected directly', () => {
  let database: TestDatabase;
  let dispose: () => Promise<void>;
  let ownerId: string;
  beforeAll(async () => {
    ({ database, dispose } = await createTestDatabase('postgres'));
    ownerId = (await createUser(database.store)).id;
    await database.store.contacts.importContacts(ownerId, [contactRecord({ name: 'Ada' }), contactRecord({ name: 'Grace' })]);
  });
  afterAll(async () => {
    await dispose();
  });

  it('keeps its startup settings and prepares its named statements on the connection, as before issue 36', async () => {
    const pool = poolOfOne(database);
    try {
      await readAPage(pool, ownerId);
      expect(await sessionOf(pool)).toEqual({
        timeZone: 'UTC',
        statementTimeout: '5s',
        prepared: ['owner_listing_page', 'owner_listing_sort_keys', 'owner_listing_state'],
      });
    } finally {
      await pool.end();
    }
  });

  it('with DB_POOLER=transaction leaves nothing on its session, as through a pooler', async () => {
    const pool = poolOfOne(database, { pooler: 'transaction' satisfies PoolerSetting });
    try {
      await readAPage(pool, ownerId);
      const serverDefault = await withAdmin(postgresAdminUrl!, async (admin) => (await admin.query('SHOW TimeZone')).rows[0].TimeZone);
      expect(await sessionOf(pool)).toEqual({ timeZone: serverDefault, statementTimeout: '0', prepared: [] });
    } finally {
      await pool.end();
    }
  });
});

describe.runIf(postgresAdminUrl !== null && pgbouncerUrl !== null)('a PostgreSQL pool through PgBouncer (transaction mode)', () => {
  let database: TestDatabase;
  let dispose: () => Promise<void>;
  let ownerId: string;
  beforeAll(async () => {
    ({ database, dispose } = await createTestDatabase('postgres-pgbouncer'));
    ownerId = (await createUser(database.store)).id;
    await database.store.contacts.importContacts(ownerId, [contactRecord({ name: 'Ada' }), contactRecord({ name: 'Grace' })]);
  });
  afterAll(async () => {
    await dispose();
  });

  it('finds the pooler itself: no named statement, no session setting; a transaction sets its own, locally', async () => {
    const pool = poolOfOne(database);
    try {
      await readAPage(pool, ownerId);
      // The database's own zone (backends.ts): nothing set the session's.
      expect(await sessionOf(pool)).toEqual({ timeZone: 'Pacific/Chatham', statementTimeout: '0', prepared: [] });
      const inside = await inTransaction(pool, async (client) => {
        const { rows } = await client.query<{ time_zone: string; statement_timeout: string }>(
          `SELECT current_setting('TimeZone') AS time_zone, current_setting('statement_timeout') AS statement_timeout`,
        );
        return rows[0];
      });
      expect(inside).toEqual({ time_zone: 'UTC', statement_timeout: '5s' });
    } finally {
      await pool.end();
    }
  });

  it('imports the same records twice (a named statement would already exist on the server connection)', async () => {
    const records = [contactRecord({ name: 'Twice', email: 'twice@example.com' })];
    await database.store.contacts.importContacts(ownerId, records, { match: ['email'] });
    await expect(database.store.contacts.importContacts(ownerId, records, { match: ['email'] })).resolves.toMatchObject({ unchanged: 1 });
  });

  /** Whether a pg_sleep is still running on the server for the test's database. */
  const sleeping = () =>
    withAdmin(postgresAdminUrl!, async (admin) => {
      const { rows } = await admin.query(
        `SELECT 1 FROM pg_stat_activity WHERE datname = $1 AND state = 'active' AND query LIKE 'SELECT pg_sleep%'`,
        [new URL(database.databaseUrl).pathname.slice(1)],
      );
      return rows.length > 0;
    });

  it('cancels a statement outside a transaction past the timeout, on the server, and the pool carries on', async () => {
    const pool = poolOfOne(database, { statementTimeoutMs: 300 });
    try {
      const started = Date.now();
      await expect(pool.query('SELECT pg_sleep(30)')).rejects.toMatchObject({ code: '57014' });
      expect(Date.now() - started).toBeLessThan(2_000);
      await expect.poll(sleeping, { timeout: 2_000 }).toBe(false);
      expect((await pool.query('SELECT 1 AS one')).rows).toEqual([{ one: 1 }]);
    } finally {
      await pool.end();
    }
  });

  it('cancels a statement inside a transaction past the timeout (SET LOCAL with its BEGIN)', async () => {
    const pool = poolOfOne(database, { statementTimeoutMs: 300 });
    try {
      const started = Date.now();
      await expect(inTransaction(pool, (client) => client.query('SELECT pg_sleep(30)'))).rejects.toMatchObject({
        code: '57014',
        message: 'canceling statement due to statement timeout',
      });
      expect(Date.now() - started).toBeLessThan(2_000);
      await expect.poll(sleeping, { timeout: 2_000 }).toBe(false);
    } finally {
      await pool.end();
    }
  });
});
