import Database from 'better-sqlite3';
import pg from 'pg';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { parseDatabaseUrl } from '../../src/domain/database-url.js';
import type { SortKey } from '../../src/domain/pagination.js';
import type { PageSource } from '../../src/store/paged-listing.js';
import { postgresPageSource } from '../../src/store/postgres/page-source.js';
import { sqlitePageSource } from '../../src/store/sqlite/page-source.js';
import { describeEachBackend, type TestDatabase } from '../support/backends.js';
import { createUser, importNumberedContacts } from '../support/seed.js';

const NETWORK = 700;
const STRIDE = 30;

/** The dialect's page source on a connection of its own, as the store builds it. */
function openPageSource(database: TestDatabase): { source: PageSource; close: () => Promise<void> } {
  const target = parseDatabaseUrl(database.databaseUrl);
  if (target.kind === 'sqlite') {
    const db = new Database(target.path, { readonly: true });
    return { source: sqlitePageSource(db, (sql) => db.prepare(sql)), close: async () => void db.close() };
  }
  const pool = new pg.Pool({ connectionString: target.url, max: 1 });
  return { source: postgresPageSource(pool), close: () => pool.end() };
}

describeEachBackend('The page source finds sort keys stride by stride', (db) => {
  let source: PageSource;
  let close: () => Promise<void>;
  let ownerId: string;
  /** The owner's listable contacts in list order, as the listing serves them. */
  let listed: { id: string }[];

  beforeAll(async () => {
    const { store } = db();
    ownerId = (await createUser(store)).id;
    await importNumberedContacts(store, ownerId, NETWORK, 'Listed');
    const other = (await createUser(store)).id;
    await importNumberedContacts(store, other, 50, 'Other');
    listed = (await store.contacts.listPage(ownerId, { limit: 100, offset: 0 })).contacts as { id: string }[];
    for (let offset = 100; offset < NETWORK; offset += 100)
      listed.push(...((await store.contacts.listPage(ownerId, { limit: 100, offset })).contacts as { id: string }[]));
    // A merged contact leaves the listing: the keys must skip it as the pages do.
    await store.contacts.merge(ownerId, listed[45]!.id, listed[44]!.id);
    listed.splice(45, 1);
    ({ source, close } = openPageSource(db()));
  });
  afterAll(async () => {
    await close?.();
  });

  const keyIds = (keys: SortKey[]) => keys.map((key) => key.id);
  const every = (from: number, count: number) =>
    Array.from({ length: count }, (_, index) => listed[from + index * STRIDE]?.id).filter((id) => id !== undefined);

  it('from the start: positions 0, stride, 2·stride, … up to the count asked', async () => {
    const { state, keys } = await source.sortKeys(ownerId, STRIDE, null, 4);
    expect(keyIds(keys)).toEqual(every(0, 4));
    expect(state.total).toBe(NETWORK - 1);
  });

  it('after a key: the positions one stride and more past it, chunk after chunk, ending with the listing', async () => {
    const chunks: SortKey[][] = [];
    let after: SortKey | null = null;
    for (;;) {
      const { keys }: { keys: SortKey[] } = await source.sortKeys(ownerId, STRIDE, after, 5);
      chunks.push(keys);
      if (keys.length < 5) break;
      after = keys.at(-1)!;
    }
    expect(chunks.map((chunk) => chunk.length)).toEqual([5, 5, 5, 5, 4]);
    expect(keyIds(chunks.flat())).toEqual(every(0, 24));
    // Each key opens the page it anchors: the page read from it starts at its position.
    const page = await source.page(ownerId, chunks[3]![2]!, 0, 2);
    expect((JSON.parse(page.data) as { id: string }[]).map((contact) => contact.id)).toEqual([
      listed[17 * STRIDE]!.id,
      listed[17 * STRIDE + 1]!.id,
    ]);
  });

  it('for an owner with no contacts: no keys', async () => {
    const { state, keys } = await source.sortKeys((await createUser(db().store)).id, STRIDE, null, 5);
    expect(keys).toEqual([]);
    expect(state.total).toBe(0);
  });
});
