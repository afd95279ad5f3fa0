import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import type { ImportRecord, Store } from '../../src/store/store.js';
import { createTestDatabase } from '../support/backends.js';
import { EVERY_FIELD_VALUES } from '../support/contact-fixtures.js';
import { contactRecord, createUser } from '../support/seed.js';

/** Values that JSON writers disagree on: escapes, non-ASCII, member order, nesting, numbers, empty containers. */
const TRICKY = 'a"b\\c\u0001\b\t\n\f\r\u001f\u007f é 😀 \u2028 </script> / ';

function records(): ImportRecord[] {
  const at = (second: number) => `2024-03-01T10:00:${String(second).padStart(2, '0')}.123Z`;
  return [
    contactRecord(
      {
        ...EVERY_FIELD_VALUES,
        name: TRICKY,
        location: 'Zürich',
        description: 'line one\nline two',
        tags: ['b', 'a', TRICKY, ''],
        enrichment: { zeta: 1, alpha: [1, 2.5, -0.001, 1e21, true, null], nested: { z: {}, a: [], ' ': TRICKY }, long_key_first: 'x' },
        enriched_at: '2024-05-01T09:30:00Z',
        research_data: { summary: 'r', b: { a: 1 } },
        researched_at: '2024-05-02T09:30:00.5+02:00',
        created_at: at(1),
        updated_at: at(2),
      },
      '0190a6b4-0000-7000-8000-000000000001',
    ),
    contactRecord({ name: 'Sparse', created_at: at(3), updated_at: at(3) }, '0190a6b4-0000-7000-8000-000000000002'),
    contactRecord(
      { name: null, research_data: { only: 'research' }, created_at: at(4), updated_at: at(4) },
      '0190a6b4-0000-7000-8000-000000000003',
    ),
    contactRecord(
      { name: 'Researched at only', researched_at: '2024-01-01T00:00:00Z', enrichment: {}, tags: [], created_at: at(5), updated_at: at(5) },
      '0190a6b4-0000-7000-8000-000000000004',
    ),
  ];
}

/**
 * The same data gives the same bytes on both databases: a client (or a cache, or a diff) cannot tell which one
 * serves it. PostgreSQL used to space its members (`"id" : `) and re-order objects' members (jsonb).
 */
describe.runIf(inject('postgresAdminUrl') !== null)('pages are byte-identical on SQLite and PostgreSQL', () => {
  const stores: { store: Store; ownerId: string; dispose: () => Promise<void> }[] = [];

  beforeAll(async () => {
    for (const backend of ['sqlite', 'postgres'] as const) {
      const { database, dispose } = await createTestDatabase(backend);
      const owner = await createUser(database.store);
      await database.store.contacts.importContacts(owner.id, records());
      stores.push({ store: database.store, ownerId: owner.id, dispose });
    }
  });
  afterAll(async () => {
    for (const { dispose } of stores) await dispose();
  });

  const pages = async (page: { limit: number; offset: number }) =>
    Promise.all(stores.map(async ({ store, ownerId }) => (await store.contacts.listPageJson(ownerId, page)).json.toString()));

  it('gives the same page, byte for byte, with no space between tokens and objects as written', async () => {
    const [sqlite, postgres] = await pages({ limit: 50, offset: 0 });
    expect(postgres).toBe(sqlite);
    expect(sqlite).not.toMatch(/" : |", "/);
    expect(sqlite).toContain('"enrichment":{"zeta":1,"alpha":[1,2.5,-0.001,1e+21,true,null],"nested":{"z":{},"a":[]');
    expect(JSON.parse(sqlite!).data).toHaveLength(4);
  });

  it('gives the same bytes for every page size and offset', async () => {
    for (const page of [
      { limit: 1, offset: 0 },
      { limit: 2, offset: 1 },
      { limit: 3, offset: 3 },
      { limit: 10, offset: 9 },
    ]) {
      const [sqlite, postgres] = await pages(page);
      expect(postgres, JSON.stringify(page)).toBe(sqlite);
    }
  });

  it('stays identical after a re-import changes an object’s member order', async () => {
    const changed = [
      contactRecord(
        {
          name: TRICKY,
          enrichment: { long_key_first: 'x', nested: { a: [], z: {} }, alpha: [], zeta: 2 },
          updated_at: '2024-06-01T00:00:00.000Z',
        },
        '0190a6b4-0000-7000-8000-000000000001',
      ),
    ];
    for (const { store, ownerId } of stores) await store.contacts.importContacts(ownerId, changed);
    const [sqlite, postgres] = await pages({ limit: 50, offset: 0 });
    expect(postgres).toBe(sqlite);
    expect(sqlite).toContain('"enrichment":{"long_key_first":"x","nested":{"a":[],"z":{}},"alpha":[],"zeta":2}');
  });

  it('embeds the same contact bytes in the change feed', async () => {
    const feeds = await Promise.all(
      stores.map(async ({ store, ownerId }) => {
        const log = await store.contacts.changeLog(ownerId);
        const read = await store.contacts.readChanges(ownerId, { seq: 0, after: null }, 100);
        expect(log.currentSeq).toBeGreaterThan(0);
        return read.records.map((record) => (record.state.kind === 'listable' ? record.state.json : null)).sort();
      }),
    );
    expect(feeds[1]).toEqual(feeds[0]);
  });
});
