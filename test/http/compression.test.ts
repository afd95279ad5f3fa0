import { brotliDecompressSync, gunzipSync } from 'node:zlib';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { acceptedCodings } from '../../src/web/content-coding.js';
import { bearer, buildTestApp } from '../support/app.js';
import { describeEachBackend } from '../support/backends.js';
import { postMcp } from '../support/mcp-request.js';
import { createKey, createUser, importNumberedContacts } from '../support/seed.js';

describe('acceptedCodings', () => {
  it.each([
    ['gzip, br', ['br', 'gzip']],
    ['br;q=0, gzip', ['gzip']],
    ['gzip;q=0.5', ['gzip']],
    ['*', ['br', 'gzip']],
    ['identity', []],
    ['deflate', []],
    ['', []],
  ])('%j allows %j', (header, expected) => {
    expect(acceptedCodings(header)).toEqual(expected);
  });

  it('allows nothing without the header', () => {
    expect(acceptedCodings(undefined)).toEqual([]);
  });
});

describeEachBackend('compressed pages of GET /api/v1/contacts', (db) => {
  let app: FastifyInstance;
  let key: string;
  let plain: Buffer;
  let ownerId: string;

  beforeAll(async () => {
    const { store } = db();
    ownerId = (await createUser(store)).id;
    key = (await createKey(store, ownerId)).key;
    await importNumberedContacts(store, ownerId, 60, 'Compressed contact with a longer name');
    app = await buildTestApp(store);
    plain = (await app.inject({ method: 'GET', url: '/api/v1/contacts', headers: bearer(key) })).rawPayload;
  });
  afterAll(async () => {
    await app.close();
  });

  const list = (acceptEncoding: string | undefined, url = '/api/v1/contacts', extra: Record<string, string> = {}) =>
    app.inject({
      method: 'GET',
      url,
      headers: { ...bearer(key), ...(acceptEncoding === undefined ? {} : { 'accept-encoding': acceptEncoding }), ...extra },
    });

  it('sends the page as it is without Accept-Encoding, with Vary: Accept-Encoding', async () => {
    const response = await list(undefined);
    expect(response.headers['content-encoding']).toBeUndefined();
    expect(response.headers.vary).toBe('Accept-Encoding');
    expect(response.headers.etag).toMatch(/^"p[\w-]{12}-\d+-50-0"$/);
    expect(plain.length).toBeGreaterThan(4000);
  });

  it('sends the same bytes in gzip and in Brotli, each with its own tag, smaller', async () => {
    for (const [header, coding, decode] of [
      ['gzip', 'gzip', gunzipSync],
      ['br', 'br', brotliDecompressSync],
      // Read a third time, the page is hot: compressed once in the best coding taken, then served from the cache.
      ['gzip, deflate, br', 'br', brotliDecompressSync],
    ] as const) {
      const response = await list(header);
      expect(response.headers['content-encoding'], header).toBe(coding);
      expect(response.headers.vary).toBe('Accept-Encoding');
      expect(response.headers.etag).toMatch(new RegExp(`^"p[\\w-]{12}-\\d+-50-0-${coding}"$`));
      expect(response.rawPayload.length).toBeLessThan(plain.length / 2);
      expect(decode(response.rawPayload).equals(plain), header).toBe(true);
    }
  });

  it('keeps a page compressed fast after one read, and a page read 16 times compressed once more, smaller, in Brotli', async () => {
    const url = '/api/v1/contacts?limit=40';
    const first = await list('gzip, br', url);
    expect(first.headers['content-encoding']).toBe('gzip');
    for (let read = 2; read < 16; read += 1) expect((await list('gzip, br', url)).rawPayload.equals(first.rawPayload)).toBe(true);
    let hot = first;
    await vi.waitFor(async () => {
      hot = await list('gzip, br', url);
      expect(hot.headers['content-encoding']).toBe('br');
    });
    expect(hot.rawPayload.length).toBeLessThan(first.rawPayload.length);
    expect(brotliDecompressSync(hot.rawPayload).toString()).toBe((await list(undefined, url)).body);
    expect((await list('gzip', url)).headers['content-encoding']).toBe('gzip');
  });

  it('serves a page kept compressed to clients that take no coding, decompressed, without reading it again', async () => {
    const { store } = db();
    const url = '/api/v1/contacts?limit=30&offset=5';
    const fromDatabase = await list(undefined, url);
    const reads = vi.spyOn(store.contacts, 'listPageJson');
    try {
      // The first read keeps the page compressed in the background.
      await vi.waitFor(async () => {
        reads.mockClear();
        expect((await list(undefined, url)).rawPayload.equals(fromDatabase.rawPayload)).toBe(true);
        expect(reads).not.toHaveBeenCalled();
      });
      // Past 16 such reads the page is also kept as it is; every read gives the same bytes and tag.
      for (let read = 0; read < 20; read += 1) {
        const again = await list(undefined, url);
        expect(again.headers['content-encoding']).toBeUndefined();
        expect(again.headers.etag).toBe(fromDatabase.headers.etag);
        expect(again.rawPayload.equals(fromDatabase.rawPayload)).toBe(true);
      }
      expect(reads).not.toHaveBeenCalled();
      expect(gunzipSync((await list('gzip', url)).rawPayload).equals(fromDatabase.rawPayload)).toBe(true);

      await importNumberedContacts(store, ownerId, 1, 'Written after the page was kept', Date.parse('2023-01-01T00:00:00.000Z'));
      await vi.waitFor(async () => {
        const fresh = JSON.parse((await list(undefined, url)).body) as { data: { name: string }[]; pagination: { total: number } };
        expect(fresh.pagination.total).toBe(61);
        expect(fresh.data[0]!.name).toBe('Compressed contact with a longer name 5');
      });
      expect(reads).toHaveBeenCalled();
    } finally {
      reads.mockRestore();
    }
  });

  it('refuses a coding with q=0, and leaves a small page as it is', async () => {
    expect((await list('br;q=0, gzip;q=0')).headers['content-encoding']).toBeUndefined();
    const small = await list('gzip, br', '/api/v1/contacts?limit=1');
    expect(small.headers['content-encoding']).toBeUndefined();
    expect(small.headers.vary).toBe('Accept-Encoding');
  });

  it('sends openapi.json, /docs and the docs bundle compressed too, each coding with its own tag', async () => {
    const docs = await app.inject({ method: 'GET', url: '/docs' });
    const bundleUrl = /<script src="([^"]+)">/.exec(docs.body)![1]!;
    for (const url of ['/api/v1/openapi.json', '/docs', bundleUrl]) {
      const identity = await app.inject({ method: 'GET', url });
      expect(identity.headers.vary, url).toBe('Accept-Encoding');
      for (const [coding, decode] of [
        ['br', brotliDecompressSync],
        ['gzip', gunzipSync],
      ] as const) {
        const response = await app.inject({ method: 'GET', url, headers: { 'accept-encoding': coding } });
        expect(response.headers['content-encoding'], url).toBe(coding);
        expect(response.headers.etag, url).toBe(`${(identity.headers.etag as string).slice(0, -1)}-${coding}"`);
        expect(decode(response.rawPayload).equals(identity.rawPayload), url).toBe(true);
        const again = await app.inject({
          method: 'GET',
          url,
          headers: { 'accept-encoding': coding, 'if-none-match': response.headers.etag as string },
        });
        expect(again.statusCode, url).toBe(304);
      }
    }
  });

  it('compresses a change-feed answer worth it, at once (never cached), Brotli first; not for HEAD', async () => {
    const since = (await list(undefined, '/api/v1/contacts/changes')).json().next_since as string;
    await importNumberedContacts(db().store, ownerId, 20, 'Fed');
    const url = `/api/v1/contacts/changes?since=${since}`;
    const gzipped = await list('gzip', url);
    expect(gzipped.headers['content-encoding']).toBe('gzip');
    expect(gzipped.headers.vary).toBe('Accept-Encoding');
    const plainFeed = await list(undefined, url);
    expect(plainFeed.headers['content-encoding']).toBeUndefined();
    expect(plainFeed.headers.vary).toBe('Accept-Encoding');
    const decoded = JSON.parse(gunzipSync(gzipped.rawPayload).toString()) as { data: unknown[] };
    expect(decoded.data).toHaveLength(20);
    expect(decoded.data).toEqual(plainFeed.json().data);
    const brotli = await list('gzip, br', url);
    expect(brotli.headers['content-encoding']).toBe('br');
    expect(JSON.parse(brotliDecompressSync(brotli.rawPayload).toString()).data).toEqual(decoded.data);
    const head = await app.inject({ method: 'HEAD', url, headers: { ...bearer(key), 'accept-encoding': 'gzip, br' } });
    expect(head.headers['content-encoding']).toBeUndefined();
    // The same answer as it is (its token, signed anew, has the same length).
    expect(head.headers['content-length']).toBe(String(plainFeed.rawPayload.length));
  });

  it('compresses MCP tool results over 1 KB as Accept-Encoding allows, and leaves a small answer as it is', async () => {
    const mcp = (acceptEncoding: string | undefined, body: unknown) =>
      postMcp(app, key, body, {
        'mcp-protocol-version': '2025-11-25',
        ...(acceptEncoding === undefined ? {} : { 'accept-encoding': acceptEncoding }),
      });
    const listing = { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'list_contacts', arguments: { limit: 50 } } };
    const plainResult = await mcp(undefined, listing);
    expect(plainResult.headers['content-encoding']).toBeUndefined();
    for (const [coding, decode] of [
      ['br', brotliDecompressSync],
      ['gzip', gunzipSync],
    ] as const) {
      const compressed = await mcp(coding, listing);
      expect(compressed.statusCode).toBe(200);
      expect(compressed.headers['content-encoding']).toBe(coding);
      expect(compressed.headers.vary).toMatch(/Accept-Encoding/);
      expect(compressed.rawPayload.length).toBeLessThan(plainResult.rawPayload.length / 3);
      expect(JSON.parse(decode(compressed.rawPayload).toString())).toEqual(plainResult.json());
    }
    expect((await mcp('gzip, br', listing)).headers['content-encoding']).toBe('br');
    // One negotiation rule for every answer: deflate, which every client that asks for it takes gzip beside, is not one.
    expect((await mcp('deflate', listing)).headers['content-encoding']).toBeUndefined();
    const ping = await mcp('gzip, br', { jsonrpc: '2.0', id: 2, method: 'ping' });
    expect(ping.headers['content-encoding']).toBeUndefined();
    expect(ping.headers.vary).toBe('Accept-Encoding');
    expect(ping.json()).toEqual({ jsonrpc: '2.0', id: 2, result: {} });
  });

  it('answers 304 to the tag of any coding the page was sent in', async () => {
    const gzipped = await list('gzip');
    const again = await list('gzip', '/api/v1/contacts', { 'if-none-match': gzipped.headers.etag as string });
    expect(again.statusCode).toBe(304);
    expect(again.headers.etag).toBe(gzipped.headers.etag);
  });
});
