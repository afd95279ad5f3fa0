import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { newId } from '../../src/domain/ids.js';
import { openStore } from '../../src/store/open-store.js';
import { parseDatabaseUrl } from '../../src/domain/database-url.js';
import type { Store } from '../../src/store/store.js';
import { databaseBefore, type OldDatabase } from '../support/old-database.js';

const COMPACT_JSON = 8;
const postgresAdminUrl = inject('postgresAdminUrl');

describe.runIf(postgresAdminUrl !== null)(
  `PostgreSQL migration ${COMPACT_JSON} (contact JSON as SQLite writes it) over existing contacts`,
  () => {
    let database: OldDatabase;
    let store: Store;
    const owner = newId();
    const ids = { objects: newId(), plain: newId() };

    beforeAll(async () => {
      database = await databaseBefore('postgres', COMPACT_JSON, postgresAdminUrl);
      await database.query(
        "INSERT INTO users (id, email, plan, created_at, updated_at) VALUES ($1, 'o@example.com', 'pro', now(), now())",
        [owner],
      );
      const insert = `INSERT INTO contacts (id, owner_id, name, tags, enrichment, research_data, created_at, updated_at)
      VALUES ($1, $2, $3, $4, $5::jsonb, $6::jsonb, '2024-01-02T03:04:05.678Z', '2024-01-02T03:04:05.678Z')`;
      // As jsonb kept them: spaced on output, members re-ordered (shorter keys first).
      await database.query(insert, [
        ids.objects,
        owner,
        'Objects "quoted"',
        ['a', 'b "c"'],
        '{"zeta": 1, "a": {"list": [1, 2.50, null, true, "x\\u00e9"], "empty": {}}, "text": "x\\ny : z, w"}',
        '{"summary": "done", "b": []}',
      ]);
      await database.query(insert, [ids.plain, owner, 'Plain', null, null, null]);
      const [before] = await database.query<{ api_json: string }>('SELECT api_json FROM contacts WHERE id = $1', [ids.plain]);
      expect(before!.api_json).toContain('"id" : ');
      store = await openStore(parseDatabaseUrl(database.url));
    });
    afterAll(async () => {
      await store?.close();
      await database?.dispose();
    });

    it('rewrites every contact’s JSON without spaces, objects compact in the order jsonb kept, values unchanged', async () => {
      // Later migrations follow it.
      expect((await store.migrate())[0]).toBe(COMPACT_JSON);
      const page = (await store.contacts.listPageJson(owner, { offset: 0, limit: 10 })).json.toString();
      expect(page).not.toMatch(/" : |", "|": /);
      const [objects, plain] = JSON.parse(page).data;
      expect(page).toContain('"enrichment":{"a":{"list":[1,2.50,null,true,"xé"],"empty":{}},"text":"x\\ny : z, w","zeta":1}');
      expect(page).toContain('"research_data":{"b":[],"summary":"done"}');
      expect(objects).toMatchObject({ name: 'Objects "quoted"', tags: ['a', 'b "c"'] });
      expect(plain).toMatchObject({ id: ids.plain, enrichment: null, tags: null });
      expect(plain).not.toHaveProperty('research_data');
      // What get decodes from the columns agrees with the stored JSON.
      expect((await store.contacts.get(owner, ids.objects))!.contact).toEqual(objects);
    });

    it('keeps refusing an object column that holds something other than an object', async () => {
      await expect(database.query("UPDATE contacts SET enrichment = '[1]' WHERE id = $1", [ids.plain])).rejects.toThrow(
        /contacts_enrichment_check/,
      );
    });
  },
);
