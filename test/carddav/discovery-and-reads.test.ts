import { brotliDecompressSync, gunzipSync } from 'node:zlib';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Store } from '../../src/store/store.js';
import { AWKWARD_CONTACT } from '../support/awkward-contact.js';
import { buildTestApp } from '../support/app.js';
import { describeEachBackend } from '../support/backends.js';
import { basic, davRequest, PROPFIND_BODY, readMultistatus } from '../support/dav.js';
import { selfContactId } from '../support/self-contact.js';
import { contactRecord, createKey, createUser } from '../support/seed.js';

const ids = {
  ada: '0190a000-0000-7000-8000-000000000001',
  bob: '0190a000-0000-7000-8000-000000000002',
  awkward: '0190a000-0000-7000-8000-000000000003',
  duplicate: '0190a000-0000-7000-8000-000000000004',
  others: '0190a000-0000-7000-8000-000000000005',
};

describeEachBackend('CardDAV discovery and reads', (db) => {
  let app: FastifyInstance;
  let store: Store;
  let ownerId: string;
  let otherId: string;
  let key: string;
  let otherKey: string;
  const book = () => `/dav/addressbooks/${ownerId}/contacts/`;
  const card = (id: string) => `${book()}${id}.vcf`;

  beforeAll(async () => {
    store = db().store;
    ownerId = (await createUser(store)).id;
    otherId = (await createUser(store)).id;
    await store.contacts.importContacts(ownerId, [
      contactRecord({ name: 'Ada Lovelace', email: 'ada@example.com', phone: '+44 20 7946 0000' }, ids.ada),
      contactRecord({ name: 'Bob Byte', email: 'bob@example.org' }, ids.bob),
      contactRecord(AWKWARD_CONTACT, ids.awkward),
      contactRecord({ name: 'Ada L.', email: 'ada@example.com' }, ids.duplicate),
    ]);
    await store.contacts.merge(ownerId, ids.duplicate, ids.ada);
    await store.contacts.importContacts(otherId, [contactRecord({ name: 'Not Yours' }, ids.others)]);
    key = (await createKey(store, ownerId)).key;
    otherKey = (await createKey(store, otherId)).key;
    app = await buildTestApp(store);
  });
  afterAll(async () => {
    await app?.close();
  });

  describe('discovery (RFC 6764, RFC 5397, RFC 6352 §7)', () => {
    it('/.well-known/carddav redirects to the service without a key, with or without a PROPFIND body', async () => {
      const requests = [
        { method: 'GET' },
        { method: 'PROPFIND' },
        // iOS and DAVx5 send their discovery body to the well-known address.
        { method: 'PROPFIND', body: PROPFIND_BODY('<D:current-user-principal/>') },
        { method: 'PROPFIND', body: PROPFIND_BODY('<D:current-user-principal/>'), headers: { 'content-type': 'text/xml' } },
      ];
      for (const request of requests) {
        const response = await davRequest(app, { ...request, url: '/.well-known/carddav' });
        expect(response.statusCode).toBe(301);
        expect(response.headers.location).toBe('/dav/');
      }
    });

    it('the root and the service answer current-user-principal; the principal the home; the home lists the book', async () => {
      for (const url of ['/', '/dav/', '/dav']) {
        const response = await davRequest(app, {
          method: 'PROPFIND',
          url,
          key,
          headers: { depth: '0' },
          body: PROPFIND_BODY('<D:current-user-principal/>'),
        });
        expect(response.statusCode).toBe(207);
        expect(response.headers['content-type']).toBe('application/xml; charset=utf-8');
        const [root] = readMultistatus(response.body).responses;
        expect(root!.props['current-user-principal']).toEqual({ href: [`/dav/principals/${ownerId}/`] });
      }
      const principal = await davRequest(app, {
        method: 'PROPFIND',
        url: `/dav/principals/${ownerId}/`,
        key,
        headers: { depth: '0' },
        body: PROPFIND_BODY('<C:addressbook-home-set/>', '<D:displayname/>', '<D:resourcetype/>'),
      });
      const [described] = readMultistatus(principal.body).responses;
      expect(described!.props['addressbook-home-set']).toEqual({ href: [`/dav/addressbooks/${ownerId}/`] });
      expect(described!.props.resourcetype).toHaveProperty('principal');

      const home = await davRequest(app, {
        method: 'PROPFIND',
        url: `/dav/addressbooks/${ownerId}/`,
        key,
        headers: { depth: '1' },
        body: PROPFIND_BODY('<D:resourcetype/>', '<D:displayname/>', '<CS:getctag/>', '<D:sync-token/>', '<D:supported-report-set/>'),
      });
      const { responses } = readMultistatus(home.body);
      expect(responses.map((response) => response.href)).toEqual([`/dav/addressbooks/${ownerId}/`, book()]);
      const addressBook = responses[1]!;
      expect(addressBook.props.resourcetype).toEqual({ collection: '', addressbook: '' });
      expect(addressBook.props.displayname).toBe('Contacts');
      expect(addressBook.props.getctag).toBe(addressBook.props['sync-token']);
      expect(String(addressBook.props['sync-token'])).toMatch(/^http:\/\//);
      const reports = JSON.stringify(addressBook.props['supported-report-set']);
      for (const name of ['addressbook-multiget', 'addressbook-query', 'sync-collection']) expect(reports).toContain(name);
      expect(responses[0]!.missing).toEqual(['getctag', 'sync-token', 'supported-report-set']);
    });

    it('the root answers PROPFIND only: GET / is 405 with Allow, a JSON error as for any other route', async () => {
      const response = await davRequest(app, { method: 'GET', url: '/', key });
      expect(response.statusCode).toBe(405);
      expect(response.headers.allow).toContain('PROPFIND');
      expect(Object.keys(response.json())).toEqual(['error']);
    });

    it('the book shows read only in current-user-privilege-set, and vCard 3.0 as its address data', async () => {
      const response = await davRequest(app, {
        method: 'PROPFIND',
        url: book(),
        key,
        headers: { depth: '0' },
        body: PROPFIND_BODY('<D:current-user-privilege-set/>', '<C:supported-address-data/>', '<D:unknown-thing/>'),
      });
      const [described] = readMultistatus(response.body).responses;
      expect(described!.props['current-user-privilege-set']).toEqual({
        privilege: [{ read: '' }, { 'read-current-user-privilege-set': '' }],
      });
      expect(described!.props['supported-address-data']).toEqual({
        'address-data-type': { '@content-type': 'text/vcard', '@version': '3.0' },
      });
      expect(described!.missing).toEqual(['unknown-thing']);
    });

    it('OPTIONS on any path of the service says DAV: 1, 3, addressbook and the methods it answers, without a key', async () => {
      for (const url of ['/dav/', book(), card(ids.ada)]) {
        const response = await davRequest(app, { method: 'OPTIONS', url });
        expect(response.statusCode).toBe(200);
        expect(response.headers.dav).toBe('1, 3, addressbook');
        expect(response.headers.allow).toBe('GET, HEAD, OPTIONS, PROPFIND, REPORT');
      }
    });
  });

  describe('listing and cards', () => {
    it('PROPFIND depth 1 on the book lists every listable card with its ETag; no merged duplicate, no self row', async () => {
      const response = await davRequest(app, {
        method: 'PROPFIND',
        url: book(),
        key,
        headers: { depth: '1' },
        body: PROPFIND_BODY('<D:resourcetype/>', '<D:getcontenttype/>', '<D:getetag/>'),
      });
      expect(response.statusCode).toBe(207);
      const { responses } = readMultistatus(response.body);
      expect(responses[0]!.href).toBe(book());
      const cards = responses.slice(1);
      const self = await selfContactId(db().databaseUrl, ownerId);
      expect(cards.map((entry) => entry.href).sort()).toEqual([card(ids.ada), card(ids.bob), card(ids.awkward)].sort());
      expect(cards.map((entry) => entry.href)).not.toContain(card(self));
      for (const entry of cards) {
        expect(entry.props.getcontenttype).toBe('text/vcard; charset=utf-8');
        expect(entry.props.getetag).toMatch(/^"[A-Za-z0-9_-]+"$/);
      }
    });

    it('a streamed multistatus is compressed as it flows when the client accepts gzip or br', async () => {
      const propfind = (acceptEncoding: string | undefined) =>
        davRequest(app, {
          method: 'PROPFIND',
          url: book(),
          key,
          headers: { depth: '1', 'accept-encoding': acceptEncoding },
          body: PROPFIND_BODY('<D:getetag/>'),
        });
      const plain = await propfind(undefined);
      expect(plain.headers['content-encoding']).toBeUndefined();
      for (const [coding, decode] of [
        ['gzip', gunzipSync],
        ['br', brotliDecompressSync],
      ] as const) {
        const coded = await propfind(coding);
        expect(coded.statusCode).toBe(207);
        expect(coded.headers['content-encoding']).toBe(coding);
        expect(coded.headers.vary).toMatch(/accept-encoding/i);
        expect(decode(coded.rawPayload).toString('utf8')).toBe(plain.body);
      }
    });

    it('PROPFIND without a body is allprop; depth 0 on a card describes it alone', async () => {
      const response = await davRequest(app, { method: 'PROPFIND', url: card(ids.bob), key, headers: { depth: '0' } });
      const { responses } = readMultistatus(response.body);
      expect(responses).toHaveLength(1);
      expect(Object.keys(responses[0]!.props).sort()).toEqual(
        [
          'current-user-principal',
          'current-user-privilege-set',
          'getcontentlength',
          'getcontenttype',
          'getetag',
          'getlastmodified',
          'resourcetype',
        ].sort(),
      );
    });

    it('GET gives the vCard 3.0 with the ETag the listing shows, and 304 for If-None-Match', async () => {
      const listing = await davRequest(app, {
        method: 'PROPFIND',
        url: book(),
        key,
        headers: { depth: '1' },
        body: PROPFIND_BODY('<D:getetag/>'),
      });
      const etags = new Map(readMultistatus(listing.body).responses.map((entry) => [entry.href, entry.props.getetag]));
      for (const id of [ids.ada, ids.bob, ids.awkward]) {
        const response = await davRequest(app, { method: 'GET', url: card(id), key });
        expect(response.statusCode).toBe(200);
        expect(response.headers['content-type']).toBe('text/vcard; charset=utf-8');
        expect(response.headers.etag).toBe(etags.get(card(id)));
        expect(response.body).toMatch(/^BEGIN:VCARD\r\nVERSION:3\.0\r\n/);
        expect(response.body).toContain(`\r\nUID:${id}\r\n`);
        const again = await davRequest(app, {
          method: 'GET',
          url: card(id),
          key,
          headers: { 'if-none-match': response.headers.etag as string },
        });
        expect(again.statusCode).toBe(304);
      }
      const ada = await davRequest(app, { method: 'GET', url: card(ids.ada), key });
      expect(ada.body).toContain('\r\nTEL;TYPE=VOICE:+44 20 7946 0000\r\n');
      expect(ada.body).toContain('\r\nEMAIL;TYPE=INTERNET:ada@example.com\r\n');
    });

    it('the ETag changes exactly when the card bytes change', async () => {
      const etag = async () => (await davRequest(app, { method: 'GET', url: card(ids.bob), key })).headers.etag;
      const before = await etag();
      await store.contacts.importContacts(ownerId, [
        contactRecord({ name: 'Bob Byte', email: 'bob@example.org', title: 'Engineer' }, ids.bob),
      ]);
      const changed = await etag();
      expect(changed).not.toBe(before);
      expect(await etag()).toBe(changed);
    });

    it('a merged duplicate, the self row and an unknown id are 404 (GET and PROPFIND)', async () => {
      const self = await selfContactId(db().databaseUrl, ownerId);
      for (const id of [ids.duplicate, self, '0190a000-0000-7000-8000-0000000000ff']) {
        expect((await davRequest(app, { method: 'GET', url: card(id), key })).statusCode).toBe(404);
        expect((await davRequest(app, { method: 'PROPFIND', url: card(id), key, headers: { depth: '0' } })).statusCode).toBe(404);
      }
    });
  });

  describe('authentication, other users, refusals', () => {
    it('Basic with any user name and the key as password, and Bearer, are accepted', async () => {
      for (const authorization of [basic(key, 'me@example.com'), basic(key, ''), `Bearer ${key}`]) {
        const response = await davRequest(app, { method: 'PROPFIND', url: '/dav/', headers: { authorization, depth: '0' } });
        expect(response.statusCode).toBe(207);
      }
    });

    it('a wrong or missing key is 401 with a constant Basic realm, whatever the Host', async () => {
      const cases: Record<string, string>[] = [
        {},
        { authorization: basic('cnt_live_wrong') },
        { authorization: basic(`${key.slice(0, -2)}xx`) },
      ];
      for (const [index, headers] of cases.entries()) {
        const response = await davRequest(app, { method: 'PROPFIND', url: book(), headers: { ...headers, host: `host${index}.example` } });
        expect(response.statusCode).toBe(401);
        expect(response.headers['www-authenticate']).toBe('Basic realm="Contacts"');
        expect(response.json()).toEqual({ error: 'Invalid or inactive API key' });
      }
    });

    it('a key without the scope or on a plan without API access is 403', async () => {
      const scopeless = (await createKey(store, ownerId, { scopes: [] })).key;
      const response = await davRequest(app, { method: 'PROPFIND', url: '/dav/', key: scopeless });
      expect(response.statusCode).toBe(403);
      expect(response.json()).toEqual({ error: 'API key lacks contacts:read' });
      const free = await createUser(store, 'free');
      const freeKey = (await createKey(store, free.id)).key;
      expect((await davRequest(app, { method: 'PROPFIND', url: '/dav/', key: freeKey })).statusCode).toBe(403);
    });

    it("another user's paths are 404, never 403, for every method", async () => {
      const paths = [
        `/dav/principals/${otherId}/`,
        `/dav/addressbooks/${otherId}/`,
        `/dav/addressbooks/${otherId}/contacts/`,
        `/dav/addressbooks/${otherId}/contacts/${ids.others}.vcf`,
      ];
      for (const url of paths) {
        for (const method of ['PROPFIND', 'GET', 'PUT', 'DELETE', 'PROPPATCH', 'MKCOL']) {
          const response = await davRequest(app, { method, url, key, body: method === 'GET' ? undefined : '' });
          expect(response.statusCode, `${method} ${url}`).toBe(404);
        }
      }
      // The other user's key reads its own card; the owner's key never does.
      const own = await davRequest(app, { method: 'GET', url: `/dav/addressbooks/${otherId}/contacts/${ids.others}.vcf`, key: otherKey });
      expect(own.statusCode).toBe(200);
    });

    it('writes are refused: 403 need-privileges, and 405 for MKCOL on a collection that exists', async () => {
      const vcard = 'BEGIN:VCARD\r\nVERSION:3.0\r\nFN:New\r\nEND:VCARD\r\n';
      const writes = [
        { method: 'PUT', url: card(ids.ada), body: vcard, headers: { 'content-type': 'text/vcard' } },
        { method: 'PUT', url: `${book()}new-card.vcf`, body: vcard, headers: { 'content-type': 'text/vcard' } },
        { method: 'DELETE', url: card(ids.ada) },
        { method: 'DELETE', url: book() },
        {
          method: 'PROPPATCH',
          url: book(),
          body: '<d:propertyupdate xmlns:d="DAV:"><d:set><d:prop><d:displayname>x</d:displayname></d:prop></d:set></d:propertyupdate>',
        },
        { method: 'MOVE', url: card(ids.ada), headers: { destination: card(ids.bob) } },
        { method: 'COPY', url: card(ids.ada), headers: { destination: card(ids.bob) } },
      ];
      for (const write of writes) {
        const response = await davRequest(app, { key, ...write });
        expect(response.statusCode, `${write.method} ${write.url}`).toBe(403);
        expect(response.headers['content-type']).toBe('application/xml; charset=utf-8');
        expect(response.body).toMatch(/<d:error [^>]*><d:need-privileges\/><\/d:error>/);
      }
      const mkcol = await davRequest(app, { method: 'MKCOL', url: book(), key });
      expect(mkcol.statusCode).toBe(405);
      expect(mkcol.headers.allow).toBe('GET, HEAD, OPTIONS, PROPFIND, REPORT');
      expect((await davRequest(app, { method: 'GET', url: card(ids.ada), key })).statusCode).toBe(200);
    });

    it('a malformed body or Depth is 400; a body with a DTD is refused', async () => {
      const cases = [
        { body: '<D:propfind xmlns:D="DAV:"><D:prop>', headers: { depth: '0' } },
        { body: '<?xml version="1.0"?><!DOCTYPE x [<!ENTITY a "aaaa">]><D:propfind xmlns:D="DAV:"><D:allprop/></D:propfind>', headers: {} },
        { body: PROPFIND_BODY('<D:getetag/>'), headers: { depth: '2' } },
        { body: '<x:propfind xmlns:D="DAV:"><D:allprop/></x:propfind>', headers: {} },
      ];
      for (const { body, headers } of cases) {
        expect((await davRequest(app, { method: 'PROPFIND', url: book(), key, body, headers })).statusCode).toBe(400);
      }
    });
  });
});
