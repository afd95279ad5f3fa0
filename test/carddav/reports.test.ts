import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MAX_FILTER_TESTS } from '../../src/carddav/query-filter.js';
import { syncTokenUri } from '../../src/carddav/sync-token.js';
import type { Store } from '../../src/store/store.js';
import { buildTestApp } from '../support/app.js';
import { describeEachBackend } from '../support/backends.js';
import { davRequest, readMultistatus, type DavResponse } from '../support/dav.js';
import { contactRecord, createKey, createUser, importNumberedContacts } from '../support/seed.js';
import { serviceKeyOf } from '../support/service-key.js';

const NS = 'xmlns:D="DAV:" xmlns:C="urn:ietf:params:xml:ns:carddav"';
const multigetBody = (hrefs: string[]) =>
  `<C:addressbook-multiget ${NS}><D:prop><D:getetag/><C:address-data/></D:prop>${hrefs.map((href) => `<D:href>${href}</D:href>`).join('')}</C:addressbook-multiget>`;
const queryBody = (filter: string, extra = '') =>
  `<C:addressbook-query ${NS}><D:prop><D:getetag/></D:prop>${filter}${extra}</C:addressbook-query>`;
const textMatch = (prop: string, text: string, attributes = '') =>
  `<C:prop-filter name="${prop}"><C:text-match ${attributes}>${text}</C:text-match></C:prop-filter>`;
const syncBody = (token: string) =>
  `<?xml version="1.0" encoding="utf-8"?><sync-collection xmlns="DAV:"><sync-token>${token}</sync-token><sync-level>1</sync-level><prop><getetag/></prop></sync-collection>`;

const ids = {
  ada: '0190b000-0000-7000-8000-000000000001',
  bob: '0190b000-0000-7000-8000-000000000002',
  chloe: '0190b000-0000-7000-8000-000000000003',
  dup: '0190b000-0000-7000-8000-000000000004',
};

describeEachBackend('CardDAV reports', (db) => {
  let app: FastifyInstance;
  let store: Store;
  let ownerId: string;
  let key: string;
  const book = () => `/dav/addressbooks/${ownerId}/contacts/`;
  const card = (id: string) => `${book()}${id}.vcf`;
  const report = (body: string, depth = '1') => davRequest(app, { method: 'REPORT', url: book(), key, body, headers: { depth } });
  const hrefsOf = (responses: DavResponse[]) => responses.map((response) => response.href);

  beforeAll(async () => {
    store = db().store;
    ownerId = (await createUser(store)).id;
    await store.contacts.importContacts(ownerId, [
      contactRecord({ name: 'Ada Lovelace', email: 'Ada@Example.com' }, ids.ada),
      contactRecord({ name: 'Bob Byte', email: 'bob@example.org' }, ids.bob),
      contactRecord({ name: 'Chloé Zhang', email: null, phone: '+33 1 23 45 67 89' }, ids.chloe),
      contactRecord({ name: 'Ada dup', email: 'ada2@example.com' }, ids.dup),
    ]);
    await store.contacts.merge(ownerId, ids.dup, ids.ada);
    await importNumberedContacts(store, ownerId, 40, 'Numbered');
    key = (await createKey(store, ownerId)).key;
    app = await buildTestApp(store);
  });
  afterAll(async () => {
    await app?.close();
  });

  describe('addressbook-multiget', () => {
    it('gives each card asked for with its ETag and vCard; unknown, merged and foreign hrefs are 404', async () => {
      const foreign = `/dav/addressbooks/${ids.bob}/contacts/${ids.bob}.vcf`;
      const asked = [
        card(ids.ada),
        `http://localhost${card(ids.bob)}`,
        card(ids.dup),
        `${book()}0190b000-0000-7000-8000-0000000000ff.vcf`,
        foreign,
        card(ids.ada),
      ];
      const response = await report(multigetBody(asked));
      expect(response.statusCode).toBe(207);
      const { responses } = readMultistatus(response.body);
      const found = responses.filter((entry) => entry.status === null);
      expect(hrefsOf(found)).toEqual([card(ids.ada), card(ids.bob)]);
      for (const entry of found) {
        const get = await davRequest(app, { method: 'GET', url: entry.href, key });
        expect(entry.props.getetag).toBe(get.headers.etag);
        expect(String(entry.props['address-data']).trimEnd()).toBe(get.body.trimEnd());
      }
      expect(responses.filter((entry) => entry.status !== null).map((entry) => entry.status)).toEqual(
        Array(3).fill('HTTP/1.1 404 Not Found'),
      );
    });

    it('many hrefs are served from one walk of the listing, with the same cards', async () => {
      const listing = await davRequest(app, {
        method: 'PROPFIND',
        url: book(),
        key,
        headers: { depth: '1' },
        body: `<D:propfind ${NS}><D:prop><D:getetag/></D:prop></D:propfind>`,
      });
      const cards = readMultistatus(listing.body).responses.slice(1);
      expect(cards).toHaveLength(43);
      const response = await report(multigetBody([...cards.map((entry) => entry.href), card(ids.dup)]));
      const { responses } = readMultistatus(response.body);
      expect(new Map(responses.filter((entry) => entry.status === null).map((entry) => [entry.href, entry.props.getetag]))).toEqual(
        new Map(cards.map((entry) => [entry.href, entry.props.getetag])),
      );
      expect(responses.at(-1)).toMatchObject({ href: card(ids.dup), status: 'HTTP/1.1 404 Not Found' });
    });
  });

  describe('addressbook-query', () => {
    const matching = async (filter: string) => {
      const response = await report(queryBody(filter));
      expect(response.statusCode).toBe(207);
      return hrefsOf(readMultistatus(response.body).responses).sort();
    };

    it('text-match on FN and EMAIL with each match type and collation, negation, anyof and allof', async () => {
      expect(await matching(`<C:filter>${textMatch('FN', 'ada')}</C:filter>`)).toEqual([card(ids.ada)]);
      expect(await matching(`<C:filter>${textMatch('FN', 'CHLOE', 'match-type="starts-with"')}</C:filter>`)).toEqual([card(ids.chloe)]);
      expect(await matching(`<C:filter>${textMatch('FN', 'chloé', 'match-type="starts-with" collation="i;octet"')}</C:filter>`)).toEqual(
        [],
      );
      expect(
        await matching(`<C:filter>${textMatch('EMAIL', 'ada@example.com', 'match-type="equals" collation="i;ascii-casemap"')}</C:filter>`),
      ).toEqual([card(ids.ada)]);
      expect(await matching(`<C:filter>${textMatch('EMAIL', '.org', 'match-type="ends-with"')}</C:filter>`)).toEqual([card(ids.bob)]);
      expect(await matching(`<C:filter test="anyof">${textMatch('EMAIL', 'bob@')}${textMatch('FN', 'lovelace')}</C:filter>`)).toEqual(
        [card(ids.ada), card(ids.bob)].sort(),
      );
      expect(await matching(`<C:filter test="allof">${textMatch('EMAIL', 'example')}${textMatch('FN', 'bob')}</C:filter>`)).toEqual([
        card(ids.bob),
      ]);
      // Negated: a card with an email not containing "example"; a card without EMAIL does not match a text-match.
      expect(await matching(`<C:filter>${textMatch('EMAIL', 'example', 'negate-condition="yes"')}</C:filter>`)).toEqual([]);
      expect(
        await matching(
          `<C:filter><C:prop-filter name="EMAIL"><C:is-not-defined/></C:prop-filter>${textMatch('FN', 'numbered 1', 'match-type="equals"')}</C:filter>`,
        ),
      ).toContain(card(ids.chloe));
    });

    it('CARDDAV:limit answers at most nresults cards, then a 507 for the book', async () => {
      const response = await report(
        queryBody(`<C:filter>${textMatch('FN', 'numbered')}</C:filter>`, '<C:limit><C:nresults>5</C:nresults></C:limit>'),
      );
      const { responses } = readMultistatus(response.body);
      expect(responses.filter((entry) => entry.status === null)).toHaveLength(5);
      expect(responses.at(-1)).toEqual({ href: book(), status: 'HTTP/1.1 507 Insufficient Storage', props: {}, missing: [] });
    });

    it('unsupported filters are 403 with the precondition RFC 6352 names', async () => {
      const refusals: [string, string][] = [
        [`<C:filter><C:prop-filter name="EMAIL"><C:param-filter name="TYPE"/></C:prop-filter></C:filter>`, 'supported-filter'],
        [`<C:filter>${textMatch('X-SOMETHING', 'x')}</C:filter>`, 'supported-filter'],
        [`<C:filter>${textMatch('FN', 'x', 'match-type="regex"')}</C:filter>`, 'supported-filter'],
        [`<C:filter>${textMatch('FN', 'x', 'collation="i;klingon"')}</C:filter>`, 'supported-collation'],
        // Each prop-filter and text-match runs on every card: past 64 together, a filter is refused before any is run.
        [`<C:filter>${textMatch('FN', 'x').repeat(MAX_FILTER_TESTS / 2)}<C:prop-filter name="FN"/></C:filter>`, 'supported-filter'],
      ];
      for (const [filter, condition] of refusals) {
        const response = await report(queryBody(filter));
        expect(response.statusCode).toBe(403);
        expect(response.body).toContain(`<card:${condition}/>`);
      }
      expect(await matching(`<C:filter>${textMatch('FN', 'lovelace').repeat(MAX_FILTER_TESTS / 2)}</C:filter>`)).toEqual([card(ids.ada)]);
    });
  });

  describe('sync-collection', () => {
    it('an empty token gives every card and a token; a sync after it moves only what changed', async () => {
      const initial = await report(syncBody(''));
      expect(initial.statusCode).toBe(207);
      const first = readMultistatus(initial.body);
      expect(first.responses).toHaveLength(43);
      expect(hrefsOf(first.responses)).not.toContain(card(ids.dup));
      expect(first.syncToken).toMatch(/^http:\/\//);

      const nothing = readMultistatus((await report(syncBody(first.syncToken!))).body);
      expect(nothing.responses).toEqual([]);
      expect(nothing.syncToken).toBe(first.syncToken);

      const added = '0190b000-0000-7000-8000-000000000010';
      await store.contacts.importContacts(ownerId, [
        contactRecord({ name: 'Bob Byte', email: 'bob@new.example' }, ids.bob),
        contactRecord({ name: 'New Person' }, added),
      ]);
      await store.contacts.merge(ownerId, ids.chloe, ids.ada);
      const numbered = first.responses.find((entry) => !Object.values(ids).some((id) => entry.href.includes(id)))!;
      const numberedId = numbered.href.split('/').at(-1)!.replace('.vcf', '');
      await store.contacts.delete(ownerId, [numberedId]);

      const response = await report(syncBody(first.syncToken!));
      expect(response.statusCode).toBe(207);
      const next = readMultistatus(response.body);
      const byHref = new Map(next.responses.map((entry) => [entry.href, entry]));
      // The survivor of a merge keeps its card: only the duplicate leaves.
      expect([...byHref.keys()].sort()).toEqual([card(ids.bob), card(added), card(ids.chloe), card(numberedId)].sort());
      expect(byHref.get(card(ids.chloe))!.status).toBe('HTTP/1.1 404 Not Found');
      expect(byHref.get(card(numberedId))!.status).toBe('HTTP/1.1 404 Not Found');
      const bob = await davRequest(app, { method: 'GET', url: card(ids.bob), key });
      expect(byHref.get(card(ids.bob))!.props.getetag).toBe(bob.headers.etag);
      expect(next.syncToken).not.toBe(first.syncToken);
      expect(readMultistatus((await report(syncBody(next.syncToken!))).body).responses).toEqual([]);
    });

    it('the book shows the token a sync ends with, as sync-token and getctag', async () => {
      const synced = readMultistatus((await report(syncBody(''))).body).syncToken;
      const props = await davRequest(app, {
        method: 'PROPFIND',
        url: book(),
        key,
        headers: { depth: '0' },
        body: `<D:propfind ${NS} xmlns:CS="http://calendarserver.org/ns/"><D:prop><D:sync-token/><CS:getctag/></D:prop></D:propfind>`,
      });
      const [described] = readMultistatus(props.body).responses;
      expect(described!.props['sync-token']).toBe(synced);
      expect(described!.props.getctag).toBe(synced);
    });

    it('an altered, unknown, expired or other user’s token is 403 valid-sync-token', async () => {
      const serviceKey = await serviceKeyOf(store);
      const current = readMultistatus((await report(syncBody(''))).body).syncToken!;
      const other = await createUser(store);
      const bad = [
        `${current.slice(0, -3)}${current.endsWith('AAA') ? 'BBB' : 'AAA'}`,
        'http://example.com/not-ours',
        'garbage',
        syncTokenUri(ownerId, 0, serviceKey, Date.now() - 400 * 86_400_000),
        syncTokenUri(other.id, 0, serviceKey, Date.now()),
        syncTokenUri(ownerId, 1_000_000_000, serviceKey, Date.now()),
      ];
      for (const token of bad) {
        const response = await report(syncBody(token));
        expect(response.statusCode, token).toBe(403);
        expect(response.body).toMatch(/<d:error [^>]*><d:valid-sync-token\/><\/d:error>/);
      }
    });

    it('a report the book does not support, or a report elsewhere, is 403 supported-report', async () => {
      const expand = await report(`<D:expand-property ${NS}/>`);
      expect(expand.statusCode).toBe(403);
      expect(expand.body).toContain('<d:supported-report/>');
      const elsewhere = await davRequest(app, { method: 'REPORT', url: `/dav/addressbooks/${ownerId}/`, key, body: syncBody('') });
      expect(elsewhere.statusCode).toBe(403);
    });
  });
});
