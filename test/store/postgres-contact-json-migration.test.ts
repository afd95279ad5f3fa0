import pg from 'pg';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { newId } from '../../src/domain/ids.js';
import { openStore, parseDatabaseUrl } from '../../src/store/open-store.js';
import { POSTGRES_MIGRATIONS } from '../../src/store/postgres/migrations.js';
import type { Store } from '../../src/store/store.js';
import { postgresDatabaseBefore, type OldPostgresDatabase } from '../support/old-postgres.js';

const postgresAdminUrl = inject('postgresAdminUrl');
const CONTACT_JSON = POSTGRES_MIGRATIONS.find((migration) => migration.name === 'contact JSON stored with the row')!;

describe.runIf(postgresAdminUrl !== null)('PostgreSQL migration of the stored contact JSON', () => {
  let database: OldPostgresDatabase;
  const ownerId = newId();
  const ids = { plain: newId(), researched: newId(), dataOnly: newId(), atOnly: newId() };
  let client: pg.Client;
  let store: Store;

  /** Every listed contact as the page shows it, beside the same contact as `get` decodes it from its columns. */
  const pageAndDecoded = async () => {
    const page = JSON.parse((await store.contacts.listPageJson(ownerId, { offset: 0, limit: 100 })).json.toString()) as {
      data: Record<string, unknown>[];
    };
    const decoded = await Promise.all(page.data.map(async (contact) => (await store.contacts.get(ownerId, contact.id as string))!.contact));
    return { listed: page.data, decoded };
  };

  beforeAll(async () => {
    database = await postgresDatabaseBefore(postgresAdminUrl!, CONTACT_JSON.version);
    client = database.client;
    await client.query("INSERT INTO users (id, email, plan, created_at, updated_at) VALUES ($1, 'owner@example.com', 'pro', now(), now())", [ownerId]);
    const insert = `INSERT INTO contacts (id, owner_id, name, email, tags, enrichment, research_data, researched_at, created_at, updated_at)
      VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $9)`;
    await client.query(insert, [ids.plain, ownerId, 'Zoë "Q" O\'Brien\\', null, null, null, null, null, '2024-01-02T03:04:05.678901Z']);
    await client.query(insert, [
      ids.researched,
      ownerId,
      'Ann 日本',
      'ann@example.com',
      ['a', 'b "c"'],
      { nested: { list: [1, 2.5, null, true] }, text: 'x\ny' },
      { summary: 'done' },
      '2024-05-06T07:08:09.1239Z',
      '2024-01-02T03:04:06Z',
    ]);
    await client.query(insert, [ids.dataOnly, ownerId, 'Data only', null, [], {}, { summary: 'pending' }, null, '2024-01-02T03:04:07Z']);
    await client.query(insert, [ids.atOnly, ownerId, 'At only', null, null, null, null, '2024-05-06T07:08:09Z', '2024-01-02T03:04:08Z']);
    store = await openStore(parseDatabaseUrl(database.url));
  });
  afterAll(async () => {
    await store?.close();
    await database?.dispose();
  });

  it('fills the JSON of existing contacts, equal field for field and in order to the contact decoded from its columns', async () => {
    expect(await store.migrate()).toEqual([CONTACT_JSON.version]);
    const { listed, decoded } = await pageAndDecoded();
    expect(listed.map((contact) => contact.id)).toEqual(Object.values(ids));
    expect(listed).toEqual(decoded);
    expect(listed.map(Object.keys)).toEqual(decoded.map(Object.keys));
    expect(listed[0]).toMatchObject({ name: 'Zoë "Q" O\'Brien\\', created_at: '2024-01-02T03:04:05.678Z', tags: null });
    expect(listed[1]).toMatchObject({ researched_at: '2024-05-06T07:08:09.123Z', research_data: { summary: 'done' } });
    expect(listed[2]).not.toHaveProperty('researched_at');
    expect(listed[3]).not.toHaveProperty('research_data');
  });

  it('follows a direct SQL write of any contact field, and refuses a direct write of the JSON itself', async () => {
    await client.query("UPDATE contacts SET name = 'Renamed', research_data = NULL, researched_at = NULL WHERE id = $1", [ids.researched]);
    const { listed, decoded } = await pageAndDecoded();
    expect(listed).toEqual(decoded);
    expect(listed[1]).toMatchObject({ name: 'Renamed' });
    expect(listed[1]).not.toHaveProperty('research_data');

    await expect(client.query("UPDATE contacts SET api_json = '{}' WHERE id = $1", [ids.plain])).rejects.toThrow(/can only be updated to DEFAULT/);
  });
});
