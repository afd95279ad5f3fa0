import Database from 'better-sqlite3';
import { keptForLife } from '../../src/store/sqlite/connection.js';
import pg from 'pg';
import { describe, expect, inject, it } from 'vitest';
import { openStore } from '../../src/store/open-store.js';
import { parseDatabaseUrl } from '../../src/domain/database-url.js';
import { buildTestApp } from '../support/app.js';
import { createTestDatabase } from '../support/backends.js';
import { listContacts } from '../support/requests.js';
import { contactRecord, createKey, createUser } from '../support/seed.js';

const postgresAdminUrl = inject('postgresAdminUrl');
const pgbouncerUrl = inject('pgbouncerUrl');

describe.each([
  { backend: 'postgres', available: postgresAdminUrl !== null },
  // The key's lookup is a statement outside a transaction, cancelled from the service; the listing's run in one, SET LOCAL.
  { backend: 'postgres-pgbouncer', available: postgresAdminUrl !== null && pgbouncerUrl !== null },
] as const)('DB_STATEMENT_TIMEOUT_MS on PostgreSQL [$backend]', ({ backend, available }) => {
  it.runIf(available)('cancels a query stuck behind a lock, so the request fails fast with a JSON 500 instead of hanging', async () => {
    const { database, dispose } = await createTestDatabase(backend, postgresAdminUrl);
    const store = await openStore(parseDatabaseUrl(database.databaseUrl), { statementTimeoutMs: 300 });
    const app = await buildTestApp(store);
    const locker = new pg.Client({ connectionString: database.databaseUrl });
    try {
      const owner = await createUser(store);
      await store.contacts.importContacts(owner.id, [contactRecord({ name: 'Behind a lock' })]);
      const { key } = await createKey(store, owner.id);
      await locker.connect();
      await locker.query('BEGIN');
      // Both tables a list request reads first: the key's, and the contacts'.
      await locker.query('LOCK TABLE api_keys, contacts IN ACCESS EXCLUSIVE MODE');
      const response = await listContacts(app, key);
      expect(response.statusCode).toBe(500);
      expect(response.json()).toEqual({ error: 'Internal server error' });
      await locker.query('ROLLBACK');
      expect((await listContacts(app, key)).statusCode).toBe(200);
    } finally {
      await locker.end();
      await app.close();
      await store.close();
      await dispose();
    }
  });
});

describe('DB_STATEMENT_TIMEOUT_MS on SQLite (busy_timeout)', () => {
  it('gives up on another connection’s write lock after the timeout, with SQLITE_BUSY', async () => {
    const { database, dispose } = await createTestDatabase('sqlite', null);
    const store = await openStore(parseDatabaseUrl(database.databaseUrl), { statementTimeoutMs: 100 });
    const writer = keptForLife(new Database(database.databaseUrl.slice('file:'.length)));
    try {
      const owner = await createUser(store);
      writer.exec('BEGIN IMMEDIATE');
      await expect(store.contacts.importContacts(owner.id, [contactRecord({ name: 'Blocked' })])).rejects.toMatchObject({
        code: 'SQLITE_BUSY',
      });
      writer.exec('ROLLBACK');
      expect(await store.contacts.importContacts(owner.id, [contactRecord({ name: 'Unblocked' })])).toMatchObject({ created: 1 });
    } finally {
      writer.close();
      await store.close();
      await dispose();
    }
  });
});
