import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openStore } from '../../src/store/open-store.js';
import { normalizeContactInput } from '../../src/domain/contact-input.js';
import { indexContactWordsSql } from '../../src/store/sqlite/migrations/search-index.js';
import type { OwnerBatch, Store } from '../../src/store/store.js';
import { contactRecord, createUser } from '../support/seed.js';

// The search re-checks every row it finds, so a stale index entry never shows in results: these tests read the
// index itself, and compare it with one rebuilt from scratch.
describe('SQLite bulk load: search index and listing totals built in bulk', () => {
  let dir: string;
  let path: string;
  let store: Store;
  let db: Database.Database;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'contacts-bulk-load-'));
    path = join(dir, 'contacts.db');
    store = await openStore({ kind: 'sqlite', path });
    await store.migrate();
    db = new Database(path);
  });
  afterAll(async () => {
    db.close();
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const indexEntries = () => {
    db.exec("CREATE VIRTUAL TABLE IF NOT EXISTS temp.contact_word_entries USING fts5vocab(main, 'contact_words', 'instance')");
    return db.prepare('SELECT term, doc, col, offset FROM temp.contact_word_entries ORDER BY doc, col, offset').all();
  };
  const totals = () => db.prepare('SELECT owner_id, total FROM owner_listing ORDER BY owner_id').all();
  const countedTotals = () =>
    db
      .prepare(
        `SELECT u.id AS owner_id, (SELECT count(*) FROM contacts c WHERE c.owner_id = u.id AND c.merged_into IS NULL AND c.is_self = 0) AS total
         FROM users u ORDER BY u.id`,
      )
      .all();

  it('equals a from-scratch index and count after a load that updates and merges across batches', async () => {
    const before = await createUser(store);
    const [renamed, merged] = [randomUUID(), randomUUID()];
    await store.contacts.importContacts(before.id, [
      contactRecord({ name: 'Old Name' }, renamed),
      contactRecord({ name: 'Merged Away' }, merged),
    ]);
    const fresh = { email: `fresh-${randomUUID()}@bulk.example`, name: 'Fresh', plan: 'pro' as const };
    const firstIds = Array.from({ length: 50 }, () => randomUUID());
    const firstBatch = firstIds.map((id, i) => contactRecord({ name: `First ${i}`, tags: ['bulk'] }, id));
    async function* batches(): AsyncGenerator<OwnerBatch> {
      yield { owner: fresh.email, records: firstBatch };
      yield { owner: before.email, records: [contactRecord({ name: 'New Name', company: 'Renamed Co' }, renamed)] };
      yield {
        owner: fresh.email,
        records: [
          contactRecord({ name: 'First 3 renamed' }, firstIds[3]!),
          { label: 'merge', contact: normalizeContactInput({ id: firstIds[4]!, merged_into: firstIds[5]! }) },
          contactRecord({ name: 'Second batch' }, randomUUID()),
        ],
      };
      yield { owner: before.email, records: [{ label: 'merge', contact: normalizeContactInput({ id: merged, merged_into: renamed }) }] };
    }
    await store.bulkImport([fresh], batches());

    const loaded = indexEntries();
    expect(loaded.length).toBeGreaterThan(0);
    expect(totals()).toEqual(countedTotals());
    db.exec("INSERT INTO contact_words (contact_words) VALUES ('delete-all')");
    db.exec(indexContactWordsSql('1'));
    expect(indexEntries()).toEqual(loaded);
  });

  it('loads an import of 10,000 contacts or more in bulk, and leaves the schema alone for a smaller one', async () => {
    const schemaVersion = () => db.pragma('schema_version', { simple: true }) as number;
    const owner = await createUser(store);
    const records = (count: number, name: string) => Array.from({ length: count }, (_, i) => contactRecord({ name: `${name} ${i}` }));
    const before = schemaVersion();
    await store.contacts.importContacts(owner.id, records(9_999, 'Small'));
    // Other connections keep their prepared statements: no trigger was dropped and restored.
    expect(schemaVersion()).toBe(before);
    await store.contacts.importContacts(owner.id, records(10_000, 'Large'));
    expect(schemaVersion()).toBeGreaterThan(before);
    expect(totals()).toEqual(countedTotals());
    const loaded = indexEntries();
    db.exec("INSERT INTO contact_words (contact_words) VALUES ('delete-all')");
    db.exec(indexContactWordsSql('1'));
    expect(indexEntries()).toEqual(loaded);
  });

  it('restores the per-row triggers, for every write after the load', async () => {
    const names = (db.prepare("SELECT name FROM sqlite_master WHERE type = 'trigger' ORDER BY name").all() as { name: string }[]).map(
      (row) => row.name,
    );
    expect(names).toEqual(expect.arrayContaining(['contact_words_insert', 'owner_listing_insert']));
  });
});
