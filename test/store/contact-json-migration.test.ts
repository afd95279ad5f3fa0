import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { newId } from '../../src/domain/ids.js';
import { openStore } from '../../src/store/open-store.js';
import { parseDatabaseUrl } from '../../src/domain/database-url.js';
import type { Store } from '../../src/store/store.js';
import { databaseBefore, migrationBackends, type OldDatabase } from '../support/old-database.js';

const STORED_JSON = 5;
const postgresAdminUrl = inject('postgresAdminUrl');

for (const { backend, available } of migrationBackends(postgresAdminUrl)) {
  describe.runIf(available)(`migration ${STORED_JSON} (contact JSON stored with the row) over existing contacts [${backend}]`, () => {
    let database: OldDatabase;
    let store: Store;
    const owner = newId();
    const ids = { mergedIntoLater: newId(), plain: newId(), researched: newId(), dataOnly: newId(), atOnly: newId(), merged: newId() };

    /** Every listed contact as the page shows it, beside the same contact as `get` decodes it from its columns. */
    const pageAndDecoded = async () => {
      const page = JSON.parse((await store.contacts.listPageJson(owner, { offset: 0, limit: 100 })).json.toString()) as {
        data: Record<string, unknown>[];
        pagination: { total: number };
      };
      const decoded = await Promise.all(page.data.map(async (contact) => (await store.contacts.get(owner, contact.id as string))!.contact));
      return { listed: page.data, decoded, total: page.pagination.total };
    };
    const names = async (query: string) => (await store.contacts.search(owner, query, 10)).map((found) => found.name);

    beforeAll(async () => {
      // A database as the releases before the stored JSON left it, with contacts of every optional-field shape.
      database = await databaseBefore(backend, STORED_JSON, postgresAdminUrl);
      const { query, tags, object } = database;
      await query("INSERT INTO users (id, email, plan, created_at, updated_at) VALUES ($1, 'owner@example.com', 'pro', $2, $3)", [
        owner,
        '2024-01-01T00:00:00.000Z',
        '2024-01-01T00:00:00.000Z',
      ]);
      const insert = `INSERT INTO contacts (id, owner_id, merged_into, name, email, tags, enrichment, research_data, researched_at, created_at, updated_at)
        VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)`;
      const at = (second: number) => `2024-01-02T03:04:0${second}.678Z`;
      // Merged into a contact written after it: the older of two duplicates merged into the newer.
      await query(insert, [ids.mergedIntoLater, owner, null, 'Older duplicate', null, null, null, null, null, at(0), at(0)]);
      await query(insert, [ids.plain, owner, null, 'Zoë "Q" O\'Brien\\', null, null, null, null, null, at(1), at(1)]);
      await query(insert, [
        ids.researched,
        owner,
        null,
        'Ann 日本',
        'ann@example.com',
        tags(['a', 'b "c"']),
        object({ nested: { list: [1, 2.5, null, true] }, text: 'x\ny' }),
        object({ summary: 'done' }),
        '2024-05-06T07:08:09.123Z',
        at(2),
        at(2),
      ]);
      await query(insert, [
        ids.dataOnly,
        owner,
        null,
        'Data only',
        null,
        tags([]),
        object({}),
        object({ summary: 'pending' }),
        null,
        at(3),
        at(3),
      ]);
      await query(insert, [ids.atOnly, owner, null, 'At only', null, null, null, null, '2024-05-06T07:08:09.000Z', at(4), at(4)]);
      await query(insert, [ids.merged, owner, ids.plain, 'Merged away', null, null, null, null, null, at(5), at(5)]);
      await query('UPDATE contacts SET merged_into = $1 WHERE id = $2', [ids.atOnly, ids.mergedIntoLater]);
      store = await openStore(parseDatabaseUrl(database.url));
    });
    afterAll(async () => {
      await store?.close();
      await database?.dispose();
    });

    it('stores the JSON of every existing contact, equal field for field and in order to the contact decoded from its columns', async () => {
      expect(await store.migrate()).toContain(STORED_JSON);
      const { listed, decoded, total } = await pageAndDecoded();
      expect(listed.map((contact) => contact.id)).toEqual([ids.plain, ids.researched, ids.dataOnly, ids.atOnly]);
      expect(total).toBe(4);
      expect(listed).toEqual(decoded);
      expect(listed.map((contact) => Object.keys(contact))).toEqual(decoded.map((contact) => Object.keys(contact)));
      expect(listed[0]).toMatchObject({ name: 'Zoë "Q" O\'Brien\\', tags: null, enrichment: null });
      expect(listed[1]).toMatchObject({
        tags: ['a', 'b "c"'],
        research_data: { summary: 'done' },
        researched_at: '2024-05-06T07:08:09.123Z',
      });
      expect(listed[2]).not.toHaveProperty('researched_at');
      expect(listed[3]).not.toHaveProperty('research_data');
    });

    it('keeps the search index, the listing totals and the constraints of the contacts table', async () => {
      expect(await names('ann')).toEqual(['Ann 日本']);
      expect(await names('merged')).toEqual([]);
      expect(await names('older')).toEqual([]);
      expect((await store.contacts.get(owner, ids.mergedIntoLater))?.contact.id).toBe(ids.atOnly);
      const insert = 'INSERT INTO contacts (id, owner_id, merged_into, name, created_at, updated_at) VALUES ($1, $2, $3, $4, $5, $6)';
      const now = new Date().toISOString();
      await database.query(insert, [newId(), owner, null, 'Added later', now, now]);
      expect(await names('added')).toEqual(['Added later']);
      expect((await pageAndDecoded()).total).toBe(5);
      // A contact merged into a contact that does not exist, or into itself, is refused as before.
      await expect(database.query(insert, [newId(), owner, newId(), 'Dangling', now, now])).rejects.toThrow(/foreign key/i);
      const itself = newId();
      await expect(database.query(insert, [itself, owner, itself, 'Itself', now, now])).rejects.toThrow(/check/i);
    });

    it('follows a direct SQL write of any contact field, and refuses a direct write of the JSON itself', async () => {
      await database.query('UPDATE contacts SET name = $1, research_data = NULL, researched_at = NULL WHERE id = $2', [
        'Renamed',
        ids.researched,
      ]);
      const { listed, decoded } = await pageAndDecoded();
      expect(listed).toEqual(decoded);
      expect(listed[1]).toMatchObject({ name: 'Renamed' });
      expect(listed[1]).not.toHaveProperty('research_data');

      await expect(database.query("UPDATE contacts SET api_json = '{}' WHERE id = $1", [ids.plain])).rejects.toThrow(
        /generated column|only be updated to DEFAULT/,
      );
    });

    it('deletes a user with their contacts', async () => {
      await database.query('DELETE FROM users WHERE id = $1', [owner]);
      expect(await database.query('SELECT id FROM contacts WHERE owner_id = $1', [owner])).toEqual([]);
    });
  });
}
