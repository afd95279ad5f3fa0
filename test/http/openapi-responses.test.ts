import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, expect, it, vi } from 'vitest';
import { decodeSyncToken, encodeSyncToken } from '../../src/domain/changes.js';
import { createMemoryCounter } from '../../src/rate-limit/memory-counter.js';
import { bearer, buildTestApp } from '../support/app.js';
import { describeEachBackend } from '../support/backends.js';
import { listenOnFreePort } from '../support/listen.js';
import { openApiResponseChecker, type Exchange, type OpenApiDocument } from '../support/openapi-responses.js';
import { rawRequest } from '../support/raw-http.js';
import { createKey, createUser, importNumberedContacts } from '../support/seed.js';
import { serviceKeyOf } from '../support/service-key.js';

const REQUEST_TIMEOUT_MS = 400;
const PER_MINUTE = 20;

/**
 * An independent check of the served document (the way Prism validates a proxied answer): every status the service
 * answers, produced over a real socket, the HTTP layer's own refusals included, is declared with its headers and body.
 */
describeEachBackend('every answer agrees with the served OpenAPI document', (db) => {
  let app: FastifyInstance;
  let port: number;
  let check: (exchange: Exchange) => string[];
  let document: OpenApiDocument;
  const keys: Record<'reader' | 'unscoped' | 'free' | 'spender', string> = { reader: '', unscoped: '', free: '', spender: '' };
  const seen = new Map<string, Set<number>>();

  /** Sends the bytes, checks the answer against the document, and notes its status for the operation it reached. */
  async function exchange(method: string, url: string, headers: Record<string, string> = {}, tail = '\r\n'): Promise<Exchange> {
    const head = [
      `${method} ${url} HTTP/1.1`,
      ...Object.entries({ host: 'api.test', connection: 'close', ...headers }).map(([n, v]) => `${n}: ${v}`),
    ];
    const answer = await rawRequest(port, `${head.join('\r\n')}\r\n${tail}`);
    const result = { method, url, status: answer.status, headers: answer.headers, body: answer.body };
    expect(check(result)).toEqual([]);
    const path = url.split('?', 1)[0]!;
    seen.set(path, (seen.get(path) ?? new Set()).add(answer.status));
    return result;
  }

  beforeAll(async () => {
    const { store } = db();
    const user = await createUser(store);
    await importNumberedContacts(store, user.id, 60, 'Contact');
    keys.reader = (await createKey(store, user.id)).key;
    keys.spender = (await createKey(store, user.id)).key;
    keys.unscoped = (await createKey(store, user.id, { scopes: [] })).key;
    keys.free = (await createKey(store, (await createUser(store, 'free')).id)).key;
    app = await buildTestApp(store, {
      config: { rateLimit: { perMinute: PER_MINUTE }, requestTimeoutMs: REQUEST_TIMEOUT_MS },
      requestCounter: createMemoryCounter({ windowMs: 60_000 }),
    });
    ({ port } = await listenOnFreePort(app));
    document = JSON.parse(JSON.stringify(app.swagger())) as OpenApiDocument;
    check = openApiResponseChecker(document);
  });
  afterAll(async () => {
    vi.restoreAllMocks();
    await app?.close();
  });

  it('the listing: pages in each coding, 304, HEAD, and every refusal', async () => {
    const auth = bearer(keys.reader);
    const page = await exchange('GET', '/api/v1/contacts?limit=20', auth);
    expect(page.status).toBe(200);
    for (const coding of ['gzip', 'br']) {
      expect((await exchange('GET', '/api/v1/contacts?limit=20', { ...auth, 'accept-encoding': coding })).headers['content-encoding']).toBe(
        coding,
      );
    }
    expect((await exchange('GET', '/api/v1/contacts?limit=20', { ...auth, 'if-none-match': String(page.headers.etag) })).status).toBe(304);
    expect((await exchange('HEAD', '/api/v1/contacts?limit=20', auth)).status).toBe(200);
    expect((await exchange('GET', '/api/v1/contacts?limit=0', auth)).status).toBe(400);
    expect((await exchange('GET', '/api/v1/contacts')).status).toBe(401);
    expect((await exchange('GET', '/api/v1/contacts', bearer(keys.unscoped))).status).toBe(403);
    expect((await exchange('GET', '/api/v1/contacts', bearer(keys.free))).status).toBe(403);
    expect((await exchange('DELETE', '/api/v1/contacts', auth)).status).toBe(405);
    expect((await exchange('GET', '/api/v1/contacts', { ...auth, 'content-length': String(2 * 1024 * 1024) })).status).toBe(413);
    expect((await exchange('GET', '/api/v1/contacts', { 'x-padding': 'x'.repeat(20_000) })).status).toBe(431);
    const spender = bearer(keys.spender);
    let last = 0;
    for (let i = 0; i <= PER_MINUTE; i += 1) last = (await exchange('GET', `/api/v1/contacts?limit=1&offset=${i}`, spender)).status;
    expect(last).toBe(429);
  });

  it('the HTTP layer: no Host, a slow client, an unknown path', async () => {
    const noHost = await rawRequest(port, 'GET /api/v1/contacts HTTP/1.1\r\nConnection: close\r\n\r\n');
    expect(check({ method: 'GET', url: '/api/v1/contacts', ...noHost })).toEqual([]);
    expect(noHost.status).toBe(400);
    // Headers never finished: the request timeout answers 408.
    const slow = await rawRequest(port, 'GET /api/v1/contacts HTTP/1.1\r\nHost: api.test\r\nX-Slow: ');
    expect(check({ method: 'GET', url: '/api/v1/contacts', ...slow })).toEqual([]);
    expect(slow.status).toBe(408);
    expect((await exchange('GET', '/api/v1/contact')).status).toBe(404);
  });

  it('failures: a server error (500) and an answer slower than the request timeout (503)', async () => {
    const { store } = db();
    const auth = bearer(keys.reader);
    vi.spyOn(store.contacts, 'listPageJson').mockRejectedValueOnce(new Error('connection reset while reading'));
    expect((await exchange('GET', '/api/v1/contacts?offset=7', auth)).status).toBe(500);
    vi.spyOn(store.contacts, 'listPageJson').mockImplementationOnce(() => new Promise(() => undefined));
    expect((await exchange('GET', '/api/v1/contacts?offset=8', auth)).status).toBe(503);
    vi.spyOn(store, 'ping').mockRejectedValueOnce(new Error('database is down'));
    expect((await exchange('GET', '/readyz')).status).toBe(503);
  });

  it('the change feed: a position, changes, 304 while nothing is new, 400 and 410', async () => {
    const auth = bearer(keys.reader);
    const position = JSON.parse((await exchange('GET', '/api/v1/contacts/changes', auth)).body.toString()).next_since as string;
    const empty = await exchange('GET', `/api/v1/contacts/changes?since=${position}`, auth);
    expect(empty.status).toBe(200);
    const serviceKey = await serviceKeyOf(db().store);
    const current = decodeSyncToken(position, serviceKey);
    const start = encodeSyncToken({ ...current, seq: 0, after: null }, serviceKey);
    expect((await exchange('GET', `/api/v1/contacts/changes?since=${start}`, { ...auth, 'accept-encoding': 'br' })).status).toBe(200);
    const unchanged = { ...auth, 'if-none-match': String(empty.headers.etag) };
    expect((await exchange('GET', `/api/v1/contacts/changes?since=${position}`, unchanged)).status).toBe(304);
    expect((await exchange('GET', '/api/v1/contacts/changes?since=nope', auth)).status).toBe(400);
    const expired = encodeSyncToken({ ...current, issuedAt: Date.now() - 400 * 86_400_000 }, serviceKey);
    expect((await exchange('GET', `/api/v1/contacts/changes?since=${expired}`, auth)).status).toBe(410);
  });

  it('the public operations: probes and the document itself, with its 304', async () => {
    expect((await exchange('GET', '/healthz')).status).toBe(200);
    expect((await exchange('HEAD', '/healthz')).status).toBe(200);
    expect((await exchange('GET', '/readyz')).status).toBe(200);
    const served = await exchange('GET', '/api/v1/openapi.json', { 'accept-encoding': 'gzip' });
    expect(served.status).toBe(200);
    expect((await exchange('GET', '/api/v1/openapi.json', { 'if-none-match': String(served.headers.etag) })).status).toBe(304);
    expect((await exchange('POST', '/api/v1/openapi.json', { 'content-length': '0' })).status).toBe(405);
  });

  it('produced every status the listing declares', () => {
    const declared = Object.keys(document.paths['/api/v1/contacts']!.get!.responses).map(Number);
    // 404 answers a path the document does not list; 400 without Host and 408 came off raw sockets above.
    const produced = new Set([...(seen.get('/api/v1/contacts') ?? []), ...(seen.get('/api/v1/contact') ?? []), 400, 408]);
    expect(declared.filter((status) => !produced.has(status))).toEqual([]);
  });
});
