import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { newId } from '../../src/domain/ids.js';
import { openStore } from '../../src/store/open-store.js';
import { parseDatabaseUrl } from '../../src/domain/database-url.js';
import { POSTGRES_MIGRATIONS } from '../../src/store/postgres/migrations.js';
import type { Store } from '../../src/store/store.js';
import { databaseBefore, type OldDatabase } from '../support/old-database.js';
import { contactRecord, createUser } from '../support/seed.js';

const postgresAdminUrl = inject('postgresAdminUrl');
const LISTING = POSTGRES_MIGRATIONS.find((migration) => migration.name === 'listing state per owner')!;

describe.runIf(postgresAdminUrl !== null)('PostgreSQL migration of the per-owner listing state', () => {
  let database: OldDatabase;
  let store: Store;
  const owners = { busy: newId(), selfOnly: newId(), withoutSelfRow: newId() };

  const listing = async () => {
    const sql = 'SELECT owner_id, total, version FROM owner_listing ORDER BY owner_id';
    return database.query<{ owner_id: string; total: number; version: string }>(sql);
  };

  beforeAll(async () => {
    // A database as the releases before the listing state left it, with data.
    database = await databaseBefore('postgres', LISTING.version, postgresAdminUrl);
    for (const [label, id] of Object.entries(owners)) {
      await database.query("INSERT INTO users (id, email, plan, created_at, updated_at) VALUES ($1, $2, 'pro', now(), now())", [
        id,
        `${label}@example.com`,
      ]);
      if (id !== owners.withoutSelfRow) {
        const selfRow = 'INSERT INTO contacts (id, owner_id, is_self, created_at, updated_at) VALUES ($1, $2, true, now(), now())';
        await database.query(selfRow, [newId(), id]);
      }
    }
    const [survivor, duplicate, third, fourth] = [newId(), newId(), newId(), newId()];
    await database.query(
      `INSERT INTO contacts (id, owner_id, merged_into, created_at, updated_at)
       VALUES ($1, $5, NULL, now(), now()), ($2, $5, $1, now(), now()), ($3, $5, NULL, now(), now()), ($4, $5, NULL, now(), now())`,
      [survivor, duplicate, third, fourth, owners.busy],
    );
    store = await openStore(parseDatabaseUrl(database.url));
  });
  afterAll(async () => {
    await store?.close();
    await database?.dispose();
  });

  it('backfills every existing user with the count of listable contacts (neither merged nor the self row)', async () => {
    expect(await store.migrate()).toContain(LISTING.version);
    const expected = [
      { owner_id: owners.busy, total: 3, version: '1' },
      { owner_id: owners.selfOnly, total: 0, version: '1' },
      { owner_id: owners.withoutSelfRow, total: 0, version: '1' },
    ].sort((a, b) => a.owner_id.localeCompare(b.owner_id));
    expect(await listing()).toEqual(expected);
    expect((await store.contacts.listPage(owners.busy, { offset: 0, limit: 10 })).total).toBe(3);
  });

  it('is harmless when run again: counts stay, every version moves so no cached page survives', async () => {
    const before = await listing();
    await database.query(LISTING.sql);
    expect(await listing()).toEqual(before.map((row) => ({ ...row, version: String(Number(row.version) + 1) })));
  });

  it('gives a user created afterwards a listing row, kept by one update per statement however many rows it writes', async () => {
    const user = await createUser(store);
    const records = Array.from({ length: 2500 }, (_, index) => contactRecord({ name: `Bulk ${index}` }));
    await store.contacts.importContacts(user.id, records);
    const rows = await database.query<{ total: number; version: string }>('SELECT total, version FROM owner_listing WHERE owner_id = $1', [
      user.id,
    ]);
    // The self row's insert, then the import's three multi-row inserts (1,000 rows per statement).
    expect(rows).toEqual([{ total: 2500, version: '4' }]);
  });
});
