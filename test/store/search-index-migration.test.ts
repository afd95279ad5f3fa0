import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { newId } from '../../src/domain/ids.js';
import { openStore } from '../../src/store/open-store.js';
import { parseDatabaseUrl } from '../../src/domain/database-url.js';
import type { Store } from '../../src/store/store.js';
import { databaseBefore, migrationBackends, type OldDatabase } from '../support/old-database.js';

const SEARCH_BY_WORD = 4;
const postgresAdminUrl = inject('postgresAdminUrl');

for (const { backend, available } of migrationBackends(postgresAdminUrl)) {
  describe.runIf(available)(`migration ${SEARCH_BY_WORD} (search by word) over existing contacts [${backend}]`, () => {
    let database: OldDatabase;
    let store: Store;
    const owner = newId();
    const other = newId();
    const ids = { ada: newId(), grace: newId(), merged: newId(), self: newId(), theirs: newId() };

    beforeAll(async () => {
      // A database as the releases before word search left it, with data.
      database = await databaseBefore(backend, SEARCH_BY_WORD, postgresAdminUrl);
      const { query, flag, tags } = database;
      const now = new Date().toISOString();
      for (const [id, email] of [
        [owner, 'owner@example.com'],
        [other, 'other@example.com'],
      ]) {
        await query("INSERT INTO users (id, email, plan, created_at, updated_at) VALUES ($1, $2, 'pro', $3, $4)", [id, email, now, now]);
      }
      const contact =
        'INSERT INTO contacts (id, owner_id, is_self, merged_into, name, email, tags, created_at, updated_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)';
      const at = (minute: number) => new Date(Date.UTC(2024, 0, 1, 0, minute)).toISOString();
      await query(contact, [ids.self, owner, flag(true), null, 'Ada Self', 'owner@example.com', null, at(0), at(0)]);
      await query(contact, [ids.ada, owner, flag(false), null, 'Ada Lovelace', 'ada@example.com', tags(['mathematician']), at(1), at(1)]);
      await query(contact, [ids.grace, owner, flag(false), null, 'Grace Hopper', 'grace@navy.mil', tags(['admiral']), at(2), at(2)]);
      await query(contact, [ids.merged, owner, flag(false), ids.ada, 'Ada Duplicate', null, null, at(3), at(3)]);
      await query(contact, [ids.theirs, other, flag(false), null, 'Ada Other', null, null, at(4), at(4)]);
      store = await openStore(parseDatabaseUrl(database.url));
    });
    afterAll(async () => {
      await store?.close();
      await database?.dispose();
    });

    it('indexes every listable contact already there, and only those', async () => {
      expect(await store.migrate()).toContain(SEARCH_BY_WORD);
      const names = async (query: string, ownerId = owner) => (await store.contacts.search(ownerId, query, 10)).map((found) => found.name);
      expect(await names('ada')).toEqual(['Ada Lovelace']);
      expect(await names('math')).toEqual(['Ada Lovelace']);
      expect(await names('navy')).toEqual(['Grace Hopper']);
      expect(await names('duplicate')).toEqual([]);
      expect(await names('self')).toEqual([]);
      expect(await names('ada', other)).toEqual(['Ada Other']);
    });
  });
}
