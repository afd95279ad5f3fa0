import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import pg from 'pg';
import { importContacts } from '../../src/operations/contacts.js';
import { createTestDatabase, type TestDatabase } from '../support/backends.js';
import { ndjsonContacts, readBody } from '../support/contact-bodies.js';
import { createUser } from '../support/seed.js';

const postgresAdminUrl = inject('postgresAdminUrl');

// Right after a large import, readers meet statistics and a visibility map that include it (issue 35): the import
// runs VACUUM (ANALYZE) of what it wrote once committed, instead of leaving it to autovacuum minutes later.
describe.runIf(postgresAdminUrl !== null)('PostgreSQL import: statistics and visibility after commit', () => {
  let database: TestDatabase;
  let dispose: () => Promise<void>;
  let client: pg.Client;

  beforeAll(async () => {
    ({ database, dispose } = await createTestDatabase('postgres'));
    client = new pg.Client({ connectionString: database.databaseUrl });
    await client.connect();
  });
  afterAll(async () => {
    await client?.end();
    await dispose?.();
  });

  const tidied = async () => {
    const { rows } = await client.query<{ relname: string; vacuumed: boolean; analyzed: boolean; all_visible: boolean }>(
      `SELECT s.relname, s.last_vacuum IS NOT NULL AS vacuumed, s.last_analyze IS NOT NULL AS analyzed,
         c.relallvisible > 0 AS all_visible
       FROM pg_stat_user_tables s JOIN pg_class c ON c.oid = s.relid
       WHERE s.relname IN ('contacts', 'contact_changes', 'owner_listing') ORDER BY s.relname`,
    );
    return rows;
  };

  it('leaves the tables of an import of 10 contacts to autovacuum', async () => {
    const owner = await createUser(database.store);
    await importContacts(database.store, { user: owner.id, file: readBody(ndjsonContacts(10), 'application/x-ndjson') });
    expect((await tidied()).map((row) => row.vacuumed)).toEqual([false, false, false]);
  });

  it('analyses and vacuums the contacts, their change log and the listing state after an import of 3,000', async () => {
    const owner = await createUser(database.store);
    const summary = await importContacts(database.store, { user: owner.id, file: readBody(ndjsonContacts(3000), 'application/x-ndjson') });
    expect(summary).toMatchObject({ imported: 3000, created: 3000 });
    expect(await tidied()).toEqual([
      { relname: 'contact_changes', vacuumed: true, analyzed: true, all_visible: true },
      { relname: 'contacts', vacuumed: true, analyzed: true, all_visible: true },
      { relname: 'owner_listing', vacuumed: true, analyzed: true, all_visible: true },
    ]);
  });
});
