import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Contact } from '../../src/domain/contact.js';
import type { Store } from '../../src/store/store.js';
import { bearer, buildTestApp } from '../support/app.js';
import { describeEachBackend } from '../support/backends.js';
import { ALWAYS_LISTED_FIELDS, LISTED_NULLS } from '../support/contact-fixtures.js';
import { listContacts } from '../support/requests.js';
import { contactRecord, createKey, createUser } from '../support/seed.js';

const ISO_MILLIS = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
const OWNER_CONTACTS = 120;

describeEachBackend('GET /api/v1/contacts', (db) => {
  let app: FastifyInstance;
  let ownerKey: string;
  let otherKey: string;
  let otherContactIds: Set<string>;
  let mergedIds: string[];

  async function walk(limit: number, key = ownerKey, between?: (page: number) => Promise<void>): Promise<Contact[]> {
    const seen: Contact[] = [];
    let offset: number | null = 0;
    for (let page = 0; offset !== null; page += 1) {
      const body: { data: Contact[]; pagination: { nextOffset: number | null } } = (
        await listContacts(app, key, `limit=${limit}&offset=${offset}`)
      ).json();
      seen.push(...body.data);
      offset = body.pagination.nextOffset;
      await between?.(page);
    }
    return seen;
  }

  beforeAll(async () => {
    const store: Store = db().store;
    const owner = await createUser(store);
    const other = await createUser(store);
    ownerKey = (await createKey(store, owner.id)).key;
    otherKey = (await createKey(store, other.id)).key;
    // Both users' contacts are interleaved in time, and some share created_at, so ordering and scoping are tested together.
    const base = Date.parse('2024-03-01T10:00:00.000Z');
    const ownerRecords = Array.from({ length: OWNER_CONTACTS }, (_, i) => {
      const at = new Date(base + Math.floor(i / 3) * 1000).toISOString();
      return contactRecord({ name: `Owner ${String(i + 1).padStart(3, '0')}`, created_at: at, updated_at: at });
    });
    const otherRecords = Array.from({ length: 30 }, (_, i) => {
      const at = new Date(base + i * 2000 + 500).toISOString();
      return contactRecord({ name: `Other ${i + 1}`, email: `other${i}@example.com`, created_at: at, updated_at: at });
    });
    await store.contacts.importContacts(owner.id, ownerRecords.slice(0, 60));
    await store.contacts.importContacts(other.id, otherRecords);
    await store.contacts.importContacts(owner.id, ownerRecords.slice(60));
    const duplicates = Array.from({ length: 3 }, (_, i) =>
      contactRecord({ name: `Duplicate ${i}`, created_at: new Date(base + i).toISOString() }),
    );
    await store.contacts.importContacts(owner.id, duplicates);
    const all = (await store.contacts.listPage(owner.id, { limit: 100, offset: 0 })).contacts;
    const dupes = all.filter((contact) => contact.name?.startsWith('Duplicate'));
    const survivor = all.find((contact) => contact.name === 'Owner 050')!;
    for (const duplicate of dupes) await store.contacts.merge(owner.id, duplicate.id, survivor.id);
    mergedIds = dupes.map((contact) => contact.id);
    otherContactIds = new Set((await store.contacts.listPage(other.id, { limit: 100, offset: 0 })).contacts.map((c) => c.id));
    app = await buildTestApp(store);
  });
  afterAll(async () => {
    await app?.close();
  });

  describe('success (spec §4 rules 1–5)', () => {
    it('applies the defaults limit=50, offset=0 and echoes them', async () => {
      const response = await listContacts(app, ownerKey);
      expect(response.statusCode).toBe(200);
      expect(response.headers['content-type']).toBe('application/json; charset=utf-8');
      const body = response.json();
      expect(body.data).toHaveLength(50);
      expect(body.pagination).toEqual({ limit: 50, offset: 0, total: OWNER_CONTACTS, nextOffset: 50 });
    });

    it('returns at most limit contacts after offset skipped ones, and echoes both', async () => {
      const body = (await listContacts(app, ownerKey, 'limit=7&offset=10')).json();
      expect(body.data.map((c: Contact) => c.name)).toEqual(
        Array.from({ length: 7 }, (_, i) => `Owner ${String(11 + i).padStart(3, '0')}`),
      );
      expect(body.pagination).toEqual({ limit: 7, offset: 10, total: OWNER_CONTACTS, nextOffset: 17 });
    });

    it('accepts the bounds limit=1, limit=100 and offset=0', async () => {
      expect((await listContacts(app, ownerKey, 'limit=1')).json().data).toHaveLength(1);
      expect((await listContacts(app, ownerKey, 'limit=100&offset=0')).json().data).toHaveLength(100);
    });

    it('ends the listing with nextOffset null on the last page', async () => {
      const body = (await listContacts(app, ownerKey, 'limit=20&offset=100')).json();
      expect(body.data).toHaveLength(20);
      expect(body.pagination.nextOffset).toBeNull();
      expect((await listContacts(app, ownerKey, 'limit=30&offset=110')).json().pagination).toEqual({
        limit: 30,
        offset: 110,
        total: OWNER_CONTACTS,
        nextOffset: null,
      });
    });

    it('gives an empty page with the true total past the end, even at the largest offset', async () => {
      for (const offset of [OWNER_CONTACTS, 5000, 2147483647]) {
        const body = (await listContacts(app, ownerKey, `offset=${offset}`)).json();
        expect(body).toEqual({ data: [], pagination: { limit: 50, offset, total: OWNER_CONTACTS, nextOffset: null } });
      }
    });

    it('orders by created_at, then id, and a page walk sees every contact exactly once', async () => {
      const seen = await walk(7);
      expect(seen).toHaveLength(OWNER_CONTACTS);
      expect(new Set(seen.map((c) => c.id)).size).toBe(OWNER_CONTACTS);
      const sorted = [...seen].sort((a, b) => a.created_at.localeCompare(b.created_at) || a.id.localeCompare(b.id));
      expect(seen.map((c) => c.id)).toEqual(sorted.map((c) => c.id));
    });

    it('never lists or counts soft-merged duplicates or the self row', async () => {
      const seen = await walk(100);
      expect(seen.some((c) => mergedIds.includes(c.id))).toBe(false);
      expect(seen.some((c) => c.name === 'Test User')).toBe(false);
      expect(seen).toHaveLength(OWNER_CONTACTS);
    });

    it('only ever returns the key owner’s contacts (isolation between interleaved users)', async () => {
      const mine = await walk(100);
      expect(mine.some((c) => otherContactIds.has(c.id))).toBe(false);
      const theirs = await walk(100, otherKey);
      expect(theirs.map((c) => c.id).sort()).toEqual([...otherContactIds].sort());
      expect(theirs.every((c) => c.name?.startsWith('Other'))).toBe(true);
      expect((await listContacts(app, otherKey)).json().pagination.total).toBe(30);
    });

    it('returns every Contact field, null when empty, and ISO 8601 UTC dates with milliseconds', async () => {
      const [contact] = (await listContacts(app, ownerKey, 'limit=1')).json().data;
      expect(Object.keys(contact).sort()).toEqual([...ALWAYS_LISTED_FIELDS].sort());
      expect(contact).toMatchObject({ ...LISTED_NULLS, name: expect.stringMatching(/^Owner /) });
      expect(contact.created_at).toBe('2024-03-01T10:00:00.000Z');
      expect(contact.updated_at).toMatch(ISO_MILLIS);
      expect(contact.id).toMatch(/^[0-9a-f-]{36}$/);
    });

    it('sends Cache-Control: no-store and no owner or internal columns', async () => {
      const response = await listContacts(app, ownerKey, 'limit=100');
      expect(response.headers['cache-control']).toBe('no-store');
      expect(response.body).not.toMatch(/owner_id|is_self|merged_into/);
    });

    it('accepts Accept: application/json (spec §1) and answers JSON whatever Accept says', async () => {
      for (const accept of ['application/json', '*/*', 'text/html']) {
        const response = await listContacts(app, ownerKey, 'limit=1', { accept });
        expect(response.statusCode).toBe(200);
        expect(response.headers['content-type']).toBe('application/json; charset=utf-8');
        expect(response.json().pagination.limit).toBe(1);
      }
    });

    it('answers HEAD like GET without a body', async () => {
      const response = await app.inject({ method: 'HEAD', url: '/api/v1/contacts?limit=2', headers: bearer(ownerKey) });
      expect(response.statusCode).toBe(200);
      expect(response.body).toBe('');
      expect(response.headers['content-type']).toBe('application/json; charset=utf-8');
      const unauthorized = await app.inject({ method: 'HEAD', url: '/api/v1/contacts' });
      expect(unauthorized.statusCode).toBe(401);
    });
  });

  describe('a walk while contacts are added (stable ordering)', () => {
    it('sees no duplicates and no gaps, and new contacts appear at the end', async () => {
      const store = db().store;
      const user = await createUser(store);
      const { key } = await createKey(store, user.id);
      await store.contacts.importContacts(
        user.id,
        Array.from({ length: 25 }, (_, i) => contactRecord({ name: `Start ${i}` })),
      );
      let added = 0;
      const seen = await walk(10, key, async () => {
        added += 1;
        await store.contacts.importContacts(user.id, [contactRecord({ name: `Added ${added}` })]);
      });
      const names = seen.map((c) => c.name);
      expect(new Set(seen.map((c) => c.id)).size).toBe(seen.length);
      expect(names.slice(0, 25)).toEqual(Array.from({ length: 25 }, (_, i) => `Start ${i}`));
      expect(names.slice(25)).toEqual(Array.from({ length: names.length - 25 }, (_, i) => `Added ${i + 1}`));
    });
  });

  describe('query validation (400 naming the parameter)', () => {
    const invalid: [string, string][] = [
      ['limit=abc', 'limit'],
      ['limit=1.5', 'limit'],
      ['limit=1e2', 'limit'],
      ['limit=', 'limit'],
      ['limit', 'limit'],
      ['limit=-1', 'limit'],
      ['limit=0', 'limit'],
      ['limit=101', 'limit'],
      ['limit=+5', 'limit'],
      ['limit=0x10', 'limit'],
      ['limit=%205', 'limit'],
      ['limit=5&limit=6', 'limit'],
      ['limit=99999999999999999999', 'limit'],
      ['offset=abc', 'offset'],
      ['offset=-1', 'offset'],
      ['offset=1.0', 'offset'],
      ['offset=', 'offset'],
      ['offset=2147483648', 'offset'],
      ['offset=1e3', 'offset'],
      ['offset=0&offset=0', 'offset'],
      ['owner_id=x', 'owner_id'],
      ['user_id=x', 'user_id'],
      ['userId=x', 'userId'],
      ['ownerId=1', 'ownerId'],
      ['api_key=x', 'api_key'],
      ['limit[]=5', 'limit[]'],
      ['LIMIT=5', 'LIMIT'],
    ];
    it.each(invalid)('?%s gives 400 naming %s', async (query, name) => {
      const response = await listContacts(app, ownerKey, query);
      expect(response.statusCode).toBe(400);
      expect(response.headers['content-type']).toBe('application/json; charset=utf-8');
      const body = response.json();
      expect(Object.keys(body)).toEqual(['error']);
      expect(body.error).toContain(`"${name}"`);
    });

    it('checks the key before the query: a bad query without a key gives 401', async () => {
      const response = await listContacts(app, null, 'limit=abc&owner_id=1');
      expect(response.statusCode).toBe(401);
    });
  });

  describe('other methods and paths', () => {
    it.each(['POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'] as const)('%s gives 405 with Allow', async (method) => {
      const response = await app.inject({
        method,
        url: '/api/v1/contacts',
        headers: { ...bearer(ownerKey), 'content-type': 'application/json' },
        payload: method === 'OPTIONS' ? undefined : '{"name":"x"}',
      });
      expect(response.statusCode).toBe(405);
      expect(response.headers.allow).toBe('GET, HEAD');
      expect(response.json()).toEqual({ error: expect.stringContaining(method) });
    });

    it('gives 404 JSON for unknown paths', async () => {
      // `/` is not unknown: it answers CardDAV's PROPFIND (test/carddav).
      for (const url of ['/nothing', '/api/v1/contacts/123', '/api/v2/contacts', '/api/v1/contact']) {
        const response = await app.inject({ method: 'GET', url, headers: bearer(ownerKey) });
        expect(response.statusCode).toBe(404);
        expect(Object.keys(response.json())).toEqual(['error']);
      }
    });

    it('answers 405 before reading a body, even an invalid one', async () => {
      const response = await app.inject({
        method: 'POST',
        url: '/api/v1/contacts',
        headers: { 'content-type': 'application/json' },
        payload: '{not json',
      });
      expect(response.statusCode).toBe(405);
      const empty = await app.inject({ method: 'OPTIONS', url: '/api/v1/contacts', headers: { 'content-type': 'application/json' } });
      expect(empty.statusCode).toBe(405);
    });

    it('changes nothing when a write is attempted', async () => {
      const before = (await listContacts(app, ownerKey, 'limit=1')).json().pagination.total;
      await app.inject({ method: 'POST', url: '/api/v1/contacts', headers: bearer(ownerKey), payload: { name: 'x' } });
      expect((await listContacts(app, ownerKey, 'limit=1')).json().pagination.total).toBe(before);
    });
  });
});

describe('server errors', () => {
  it('return a generic JSON 500 without internals', async () => {
    const { createTestDatabase } = await import('../support/backends.js');
    const { database, dispose } = await createTestDatabase('sqlite');
    const user = await createUser(database.store);
    const { key } = await createKey(database.store, user.id);
    const fail = async (): Promise<never> => {
      throw new Error('SQLITE_ERROR: no such column: secret_column in SELECT * FROM contacts at /srv/app/store.ts:42');
    };
    const contacts = Object.assign(Object.create(database.store.contacts) as Store['contacts'], {
      listPage: fail,
      listPageJson: fail,
    });
    const failing = Object.assign(Object.create(database.store) as Store, { contacts });
    const app = await buildTestApp(failing);
    const response = await listContacts(app, key);
    expect(response.statusCode).toBe(500);
    expect(response.json()).toEqual({ error: 'Internal server error' });
    expect(response.body).not.toMatch(/SQLITE|SELECT|srv|store\.ts/);
    await app.close();
    await dispose();
  });
});
