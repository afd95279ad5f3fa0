import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { MAX_PROPERTIES } from '../../src/carddav/property-request.js';
import { buildTestApp } from '../support/app.js';
import { describeEachBackend } from '../support/backends.js';
import { basic, readMultistatus } from '../support/dav.js';
import { listenOnFreePort } from '../support/listen.js';
import { contactRecord, createKey, createUser } from '../support/seed.js';

const NS = 'xmlns:D="DAV:" xmlns:C="urn:ietf:params:xml:ns:carddav" xmlns:x="urn:example:ext"';
/** `levels` elements, each inside the one before. */
const nested = (levels: number) => '<x:a>'.repeat(levels) + '</x:a>'.repeat(levels);

/** The bodies clients send, with `extra` among the properties asked for: where a client puts an element of its own. */
const bodies = {
  propfind: (extra: string) => `<D:propfind ${NS}><D:prop><D:getetag/>${extra}</D:prop></D:propfind>`,
  query: (extra: string) =>
    `<C:addressbook-query ${NS}><D:prop><D:getetag/>${extra}</D:prop><C:filter><C:prop-filter name="FN"><C:text-match>Ada</C:text-match></C:prop-filter></C:filter></C:addressbook-query>`,
  sync: (extra: string) =>
    `<D:sync-collection ${NS}><D:sync-token/><D:sync-level>1</D:sync-level><D:prop><D:getetag/>${extra}</D:prop></D:sync-collection>`,
  multiget: (extra: string, href: string) =>
    `<C:addressbook-multiget ${NS}><D:prop><D:getetag/>${extra}</D:prop><D:href>${href}</D:href></C:addressbook-multiget>`,
};
/** Levels above `extra` in each body: the document element and DAV:prop. */
const ABOVE = 2;

const REFUSAL = /^<\?xml[^>]*>\n<d:error [^>]*><x:xml-nesting-within-limits xmlns:x="urn:x-contacts-read-api:dav"\/><\/d:error>\n$/;

describeEachBackend('CardDAV request bodies past their limits (over a socket)', (db) => {
  let app: FastifyInstance;
  let origin: string;
  let ownerId: string;
  let key: string;
  const ada = '0190c000-0000-7000-8000-000000000001';
  const book = () => `/dav/addressbooks/${ownerId}/contacts/`;
  const send = (method: string, path: string, body: string, depth = '1') =>
    fetch(`${origin}${path}`, {
      method,
      headers: { authorization: basic(key), 'content-type': 'application/xml; charset=utf-8', depth },
      body,
    });
  const requests = (extra: string) => [
    { what: 'PROPFIND', method: 'PROPFIND', body: bodies.propfind(extra) },
    { what: 'addressbook-query', method: 'REPORT', body: bodies.query(extra) },
    { what: 'sync-collection', method: 'REPORT', body: bodies.sync(extra) },
    { what: 'addressbook-multiget', method: 'REPORT', body: bodies.multiget(extra, `${book()}${ada}.vcf`) },
  ];

  beforeAll(async () => {
    const store = db().store;
    ownerId = (await createUser(store)).id;
    await store.contacts.importContacts(ownerId, [contactRecord({ name: 'Ada Lovelace', email: 'ada@example.com' }, ada)]);
    key = (await createKey(store, ownerId)).key;
    app = await buildTestApp(store);
    origin = (await listenOnFreePort(app)).origin;
  });
  afterAll(async () => {
    await app?.close();
  });

  for (const levels of [2_000, 100_000]) {
    it(`a body nested ${levels.toLocaleString('en')} deep is 400 with a DAV error naming the limit, for every method and report`, async () => {
      for (const { what, method, body } of requests(nested(levels))) {
        const response = await send(method, book(), body);
        expect(response.status, what).toBe(400);
        expect(response.headers.get('content-type'), what).toBe('application/xml; charset=utf-8');
        expect(await response.text(), what).toMatch(REFUSAL);
      }
    });
  }

  it('the well-known address never reads the body: 301 at 2,000 deep, 413 past its 1 MiB limit at 100,000', async () => {
    for (const [levels, status] of [
      [2_000, 301],
      [100_000, 413],
    ] as const) {
      const response = await fetch(`${origin}/.well-known/carddav`, {
        method: 'PROPFIND',
        headers: { 'content-type': 'application/xml' },
        body: bodies.propfind(nested(levels)),
        redirect: 'manual',
      });
      expect(response.status, `${levels}`).toBe(status);
    }
  });

  it('a body nested 10 deep, and one at the limit of 256, are read as before; 257 is refused', async () => {
    for (const depth of [10, 256]) {
      for (const { what, method, body } of requests(nested(depth - ABOVE))) {
        const response = await send(method, book(), body);
        expect(response.status, `${what} at ${depth}`).toBe(207);
        const { responses } = readMultistatus(await response.text());
        const cards = responses.filter((entry) => entry.href.endsWith('.vcf'));
        expect(
          cards.map((entry) => entry.href),
          `${what} at ${depth}`,
        ).toEqual([`${book()}${ada}.vcf`]);
        expect(cards[0]!.props.getetag).toMatch(/^"/);
      }
    }
    for (const { what, method, body } of requests(nested(257 - ABOVE))) {
      expect((await send(method, book(), body)).status, what).toBe(400);
    }
  });

  it(`a DAV:prop naming more than ${MAX_PROPERTIES} properties is 400, for PROPFIND and every report; ${MAX_PROPERTIES} are answered`, async () => {
    // Each property is answered for every card: a long list multiplies the answer by the book's size.
    const properties = (count: number) => Array.from({ length: count - 1 }, (_, index) => `<x:p${index}/>`).join('');
    for (const { what, method, body } of requests(properties(MAX_PROPERTIES + 1))) {
      const response = await send(method, book(), body);
      expect(response.status, what).toBe(400);
      expect(await response.json(), what).toEqual({ error: `DAV:prop may name at most ${MAX_PROPERTIES} properties` });
    }
    for (const { what, method, body } of requests(properties(MAX_PROPERTIES))) {
      const response = await send(method, book(), body);
      expect(response.status, what).toBe(207);
      const card = readMultistatus(await response.text()).responses.find((entry) => entry.href.endsWith('.vcf'));
      expect(card!.missing, what).toHaveLength(MAX_PROPERTIES - 1);
    }
  });

  it('element names that run long along one branch are refused the same way, however shallow', async () => {
    const long = `x:${'n'.repeat(2_500)}`;
    const body = bodies.propfind(`<${long}><${long}/></${long}>`);
    const response = await send('PROPFIND', book(), body);
    expect(response.status).toBe(400);
    expect(await response.text()).toMatch(REFUSAL);
  });
});
