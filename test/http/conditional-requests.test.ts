import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RATE_LIMIT_WINDOW_MS } from '../../src/domain/rate-limit.js';
import { ifNoneMatchMatches } from '../../src/web/conditional.js';
import { createMemoryCounter } from '../../src/rate-limit/memory-counter.js';
import { buildTestApp } from '../support/app.js';
import { describeEachBackend } from '../support/backends.js';
import { listContactChanges, listContacts } from '../support/requests.js';
import { contactRecord, createKey, createUser, importNumberedContacts } from '../support/seed.js';
import { overrideStore } from '../support/store-override.js';

describe('ifNoneMatchMatches (RFC 9110 §13.1.2)', () => {
  it.each([
    ['"p1-50-0"', true],
    ['W/"p1-50-0"', true],
    ['"x", "p1-50-0"', true],
    ['*', true],
    [' * ', true],
    ['"p1-50-1"', false],
    ['p1-50-0', false],
    ['"p1-50-0', false],
    ['', false],
  ])('%j against "p1-50-0": %s', (header, expected) => {
    expect(ifNoneMatchMatches(header, '"p1-50-0"')).toBe(expected);
  });

  it('never matches without the header', () => {
    expect(ifNoneMatchMatches(undefined, '"p1-50-0"')).toBe(false);
  });
});

describeEachBackend('conditional requests on GET /api/v1/contacts', (db) => {
  let app: FastifyInstance;
  let key: string;
  let ownerId: string;
  let pagesRead = 0;

  beforeAll(async () => {
    const { store } = db();
    ownerId = (await createUser(store)).id;
    key = (await createKey(store, ownerId)).key;
    await importNumberedContacts(store, ownerId, 5, 'Etag');
    const counting = overrideStore(store, {
      contacts: {
        listPageJson: (...args) => {
          pagesRead += 1;
          return store.contacts.listPageJson(...args);
        },
      },
    });
    app = await buildTestApp(counting);
  });
  afterAll(async () => {
    await app.close();
  });

  it('gives each page a strong ETag, and answers 304 without a body, and without reading the page, while it is current', async () => {
    const first = await listContacts(app, key, 'limit=2');
    expect(first.statusCode).toBe(200);
    const etag = first.headers.etag as string;
    expect(etag).toMatch(/^"p[\w-]{12}-\d+-2-0"$/);
    const before = pagesRead;
    const again = await listContacts(app, key, 'limit=2', { 'if-none-match': etag });
    expect(again.statusCode).toBe(304);
    expect(again.body).toBe('');
    expect(again.headers.etag).toBe(etag);
    expect(pagesRead).toBe(before);
    expect((await listContacts(app, key, 'limit=2', { 'if-none-match': `"other", W/${etag}` })).statusCode).toBe(304);
  });

  it('`If-None-Match: *` on the listing (which always exists) gives 304', async () => {
    const response = await listContacts(app, key, '', { 'if-none-match': '*' });
    expect(response.statusCode).toBe(304);
    expect(response.headers.etag).toMatch(/^"p[\w-]{12}-\d+-50-0"$/);
  });

  it('another page, or a write to the owner’s contacts, gives a new tag and the page', async () => {
    const etag = (await listContacts(app, key, 'limit=2')).headers.etag as string;
    const other = await listContacts(app, key, 'limit=2&offset=2', { 'if-none-match': etag });
    expect(other.statusCode).toBe(200);
    expect(other.headers.etag).not.toBe(etag);
    await db().store.contacts.importContacts(ownerId, [contactRecord({ name: 'Etag new' })]);
    const changed = await listContacts(app, key, 'limit=2', { 'if-none-match': etag });
    expect(changed.statusCode).toBe(200);
    expect(changed.headers.etag).not.toBe(etag);
    expect(changed.json().pagination.total).toBe(6);
  });

  it("never answers 304 to another owner's tag, even at the same listing version and page", async () => {
    const { store } = db();
    const [first, second] = [await createUser(store), await createUser(store)];
    for (const user of [first, second]) await importNumberedContacts(store, user.id, 3, 'Twin');
    expect(await store.contacts.listingVersion(first.id)).toBe(await store.contacts.listingVersion(second.id));
    const keyOf = async (userId: string) => (await createKey(store, userId)).key;
    const [firstKey, secondKey] = [await keyOf(first.id), await keyOf(second.id)];
    const firstTag = (await listContacts(app, firstKey)).headers.etag as string;
    const secondAnswer = await listContacts(app, secondKey, '', { 'if-none-match': firstTag });
    expect(secondAnswer.statusCode).toBe(200);
    expect(secondAnswer.headers.etag).not.toBe(firstTag);
    // The change feed's tag of an empty answer, at the same position in both logs, differs too.
    const nothingNewTag = async (ownerKey: string) => {
      const position = (await listContactChanges(app, ownerKey)).json().next_since as string;
      return (await listContactChanges(app, ownerKey, `since=${position}`)).headers.etag;
    };
    const feedTags = [await nothingNewTag(firstKey), await nothingNewTag(secondKey)];
    expect(feedTags[0]).toMatch(/^"c[\w-]{12}-\d+"$/);
    expect(feedTags[0]?.replace(/^"c[\w-]{12}/, '')).toBe(feedTags[1]?.replace(/^"c[\w-]{12}/, ''));
    expect(feedTags[0]).not.toBe(feedTags[1]);
  });

  it('a 304 counts against the rate limit like any request that passed the key check (docs/api.md)', async () => {
    const limited = await buildTestApp(db().store, {
      config: { rateLimit: { perMinute: 2 } },
      requestCounter: createMemoryCounter({ windowMs: RATE_LIMIT_WINDOW_MS }),
    });
    try {
      const send = () => listContacts(limited, key, '', { 'if-none-match': '*' });
      const first = await send();
      expect(first.statusCode).toBe(304);
      expect(first.headers['x-ratelimit-remaining']).toBe('1');
      expect((await send()).statusCode).toBe(304);
      expect((await send()).statusCode).toBe(429);
    } finally {
      await limited.close();
    }
  });

  it('openapi.json, /docs and the docs bundle carry ETags and answer 304 to them and to *', async () => {
    const docs = await app.inject({ method: 'GET', url: '/docs' });
    const bundleUrl = /<script src="([^"]+)">/.exec(docs.body)![1]!;
    for (const url of ['/api/v1/openapi.json', '/docs', bundleUrl]) {
      const first = await app.inject({ method: 'GET', url });
      expect(first.statusCode, url).toBe(200);
      const etag = first.headers.etag as string;
      expect(etag, url).toMatch(/^"[\w-]{32}"$/);
      expect((await app.inject({ method: 'GET', url })).headers.etag, url).toBe(etag);
      for (const header of [etag, '*']) {
        const again = await app.inject({ method: 'GET', url, headers: { 'if-none-match': header } });
        expect(again.statusCode, url).toBe(304);
        expect(again.body, url).toBe('');
      }
      expect((await app.inject({ method: 'GET', url, headers: { 'if-none-match': '"stale"' } })).statusCode, url).toBe(200);
    }
  });

  it('the change feed tags an answer with nothing new, and answers 304 to it until something changes', async () => {
    const position = (await listContactChanges(app, key)).json().next_since as string;
    const since = `since=${position}`;
    const empty = await listContactChanges(app, key, since);
    expect(empty.statusCode).toBe(200);
    expect(empty.json().data).toEqual([]);
    const etag = empty.headers.etag as string;
    expect(etag).toMatch(/^"c[\w-]{12}-\d+"$/);
    const unchanged = await listContactChanges(app, key, since, { 'if-none-match': etag });
    expect(unchanged.statusCode).toBe(304);
    expect(unchanged.body).toBe('');
    await db().store.contacts.importContacts(ownerId, [contactRecord({ name: 'Etag feed' })]);
    const changed = await listContactChanges(app, key, since, { 'if-none-match': etag });
    expect(changed.statusCode).toBe(200);
    expect(changed.headers.etag).toBeUndefined();
    expect(changed.json().data.map((change: { contact?: { name: string } }) => change.contact?.name)).toEqual(['Etag feed']);
  });

  it('a bad key is still a 401, whatever If-None-Match says', async () => {
    const response = await listContacts(app, null, '', { 'if-none-match': '*' });
    expect(response.statusCode).toBe(401);
  });
});
