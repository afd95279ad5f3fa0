import { connect } from 'node:net';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Store, User } from '../../src/store/store.js';
import { bearer, buildTestApp } from '../support/app.js';
import { createTestDatabase, describeEachBackend } from '../support/backends.js';
import { listenOnFreePort } from '../support/listen.js';
import { fetchContacts, listContacts } from '../support/requests.js';
import { createKey, createUser, importNumberedContacts } from '../support/seed.js';

const SQL_INJECTION = [
  "' OR '1'='1",
  '1 OR 1=1',
  '1; DROP TABLE contacts; --',
  '0 UNION SELECT secret_hash FROM api_keys',
  "'); DELETE FROM users; --",
  "1'; UPDATE api_keys SET revoked_at = NULL; --",
  '$1',
  '\\x27 OR 1=1',
];
const NUL_VALUES = ['%00', '1%00', '%001', '10%00--', '%00%00'];
const HUGE_NUMBERS = [
  '1e308',
  '99999999999999999999',
  '2147483648',
  '9'.repeat(400),
  '18446744073709551616',
  '0x7fffffff',
  '1' + '0'.repeat(30),
];
const INVALID_KEY = { error: 'Invalid or inactive API key' };

interface Snapshot {
  user: User | null;
  contacts: unknown;
  keys: unknown;
}

/** Everything a successful injection could have changed, read through the store. */
async function snapshot(store: Store, user: User): Promise<Snapshot> {
  return {
    user: await store.users.find(user.email),
    contacts: await store.contacts.listPage(user.id, { limit: 100, offset: 0 }),
    keys: await store.keys.listForOwner(user.id),
  };
}

/** Seeds a user with contacts and a key, and makes one request so that the key's last use is already recorded. */
async function seed(store: Store, app: FastifyInstance): Promise<{ user: User; key: string }> {
  const user = await createUser(store);
  const { key } = await createKey(store, user.id);
  await importNumberedContacts(store, user.id, 12, 'Target');
  expect((await listContacts(app, key)).statusCode).toBe(200);
  return { user, key };
}

function expectErrorJson(response: { statusCode: number; headers: Record<string, unknown>; body: string }, status: number): void {
  expect(response.statusCode, response.body).toBe(status);
  expect(String(response.headers['content-type'])).toMatch(/^application\/json/);
  const body = JSON.parse(response.body) as Record<string, unknown>;
  expect(Object.keys(body)).toEqual(['error']);
  expect(typeof body.error).toBe('string');
}

describeEachBackend('malicious input in parameters and headers gets its 4xx JSON and changes nothing', (db) => {
  let app: FastifyInstance;
  let user: User;
  let key: string;
  let before: Snapshot;

  beforeAll(async () => {
    app = await buildTestApp(db().store);
    ({ user, key } = await seed(db().store, app));
    before = await snapshot(db().store, user);
  });
  afterAll(async () => {
    await app?.close();
  });

  it('SQL injection in limit, offset or any other query parameter is a 400 naming the parameter', async () => {
    for (const text of SQL_INJECTION) {
      for (const name of ['limit', 'offset', 'owner_id', encodeURIComponent(text)]) {
        const response = await listContacts(app, key, `${name}=${encodeURIComponent(text)}`);
        expectErrorJson(response, 400);
        expect(response.json().error).toContain(`"${decodeURIComponent(name)}"`);
      }
    }
    expect(await snapshot(db().store, user)).toEqual(before);
  });

  it('SQL injection in the Authorization header is the one 401 for every bad key', async () => {
    for (const text of SQL_INJECTION) {
      for (const authorization of [`Bearer ${text}`, `Bearer cnt_live_${text}`, text, `Bearer ${key}${text}`]) {
        const response = await listContacts(app, null, 'limit=1', { authorization });
        expectErrorJson(response, 401);
        expect(response.json()).toEqual(INVALID_KEY);
      }
    }
    expect(await snapshot(db().store, user)).toEqual(before);
  });

  it('SQL injection in a path segment is a 4xx on every templated path the document publishes', async () => {
    const document = (await app.inject({ url: '/api/v1/openapi.json' })).json() as { paths: Record<string, unknown> };
    const templates = Object.keys(document.paths).filter((path) => path.includes('{'));
    for (const template of templates) {
      for (const text of SQL_INJECTION) {
        const response = await app.inject({ url: template.replace(/\{[^}]+\}/g, encodeURIComponent(text)), headers: bearer(key) });
        expect(response.statusCode).toBeGreaterThanOrEqual(400);
        expectErrorJson(response, response.statusCode);
      }
    }
    for (const text of SQL_INJECTION) expectErrorJson(await app.inject({ url: `/api/v1/contacts/${encodeURIComponent(text)}/x` }), 404);
    expect(await snapshot(db().store, user)).toEqual(before);
  });

  it('SQL injection in other headers is inert: the request is answered as if they were absent', async () => {
    const plain = (await listContacts(app, key, 'limit=5')).json();
    for (const text of SQL_INJECTION) {
      const response = await listContacts(app, key, 'limit=5', {
        'x-request-id': text,
        accept: text,
        cookie: `session=${text}`,
        'x-forwarded-for': text,
        'x-owner-id': text,
      });
      expect(response.statusCode).toBe(200);
      expect(response.json()).toEqual(plain);
    }
    expect(await snapshot(db().store, user)).toEqual(before);
  });

  it('NUL bytes (%00) in a query name or value are a 400', async () => {
    for (const value of NUL_VALUES) {
      expectErrorJson(await listContacts(app, key, `limit=${value}`), 400);
      expectErrorJson(await listContacts(app, key, `offset=${value}`), 400);
      expectErrorJson(await listContacts(app, key, `${value}=1`), 400);
    }
    expect(await snapshot(db().store, user)).toEqual(before);
  });

  it('huge and non-decimal numbers are a 400 naming the parameter, never an overflow', async () => {
    for (const value of HUGE_NUMBERS) {
      for (const name of ['limit', 'offset']) {
        const response = await listContacts(app, key, `${name}=${value}`);
        expectErrorJson(response, 400);
        expect(response.json().error).toContain(`"${name}"`);
      }
    }
    expect(await snapshot(db().store, user)).toEqual(before);
  });
});

/** One raw HTTP/1.1 exchange: writes `chunks` (waiting `gapMs` between them), reads until the server closes. */
function rawExchange(
  port: number,
  chunks: string[],
  gapMs = 0,
): Promise<{ status: number; headers: Record<string, string>; body: string }> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1');
    let received = '';
    let timer: NodeJS.Timeout | undefined;
    socket.setEncoding('latin1');
    socket.on('data', (data: string) => void (received += data));
    socket.on('error', () => undefined);
    socket.on('close', () => {
      clearTimeout(timer);
      const split = received.indexOf('\r\n\r\n');
      if (split < 0) return reject(new Error(`no HTTP response before close: ${JSON.stringify(received)}`));
      const [statusLine = '', ...lines] = received.slice(0, split).split('\r\n');
      const headers = Object.fromEntries(
        lines.map((line) => [line.slice(0, line.indexOf(':')).toLowerCase(), line.slice(line.indexOf(':') + 1).trim()]),
      );
      resolve({ status: Number(statusLine.split(' ')[1]), headers, body: received.slice(split + 4) });
    });
    const queue = [...chunks];
    const writeNext = () => {
      if (socket.destroyed || queue.length === 0) return;
      socket.write(queue.shift()!, 'latin1');
      timer = setTimeout(writeNext, gapMs);
    };
    socket.once('connect', writeNext);
  });
}

const asResponse = (raw: { status: number; headers: Record<string, string>; body: string }) => ({
  statusCode: raw.status,
  headers: raw.headers,
  body: raw.body,
});

describe('malicious input over a real socket gets its 4xx JSON and changes nothing', () => {
  const REQUEST_TIMEOUT_MS = 2_000;
  let app: FastifyInstance;
  let dispose: () => Promise<void>;
  let store: Store;
  let user: User;
  let key: string;
  let before: Snapshot;
  let origin: string;
  let port: number;

  beforeAll(async () => {
    const created = await createTestDatabase('sqlite', null);
    dispose = created.dispose;
    store = created.database.store;
    app = await buildTestApp(store, { config: { requestTimeoutMs: REQUEST_TIMEOUT_MS } });
    ({ user, key } = await seed(store, app));
    before = await snapshot(store, user);
    ({ origin, port } = await listenOnFreePort(app));
  });
  afterAll(async () => {
    await app?.close();
    await dispose?.();
  });

  it('a 20 KB URL is a 431 with a JSON body', async () => {
    const response = await fetchContacts(origin, key, `limit=1&${'x'.repeat(20_000)}=1`);
    expectErrorJson(
      { statusCode: response.status, headers: { 'content-type': response.headers.get('content-type') }, body: await response.text() },
      431,
    );
  });

  it('a 20 KB header, Authorization included, is a 431 with a JSON body', async () => {
    for (const headers of [{ ...bearer(key), 'x-padding': 'a'.repeat(20_000) }, { authorization: `Bearer ${'A'.repeat(20_000)}` }]) {
      const response = await fetchContacts(origin, null, '', headers);
      expect(response.status).toBe(431);
      expect(await response.json()).toEqual({ error: 'Request line and headers too large: at most 16 KB together' });
    }
  });

  it('a NUL byte in a header value or in the request line is a 400 with a JSON body', async () => {
    const withNulHeader = `GET /api/v1/contacts HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${key}\r\nX-Note: a\u0000b\r\n\r\n`;
    const withNulAuthorization = `GET /api/v1/contacts HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${key}\u0000\r\n\r\n`;
    const withNulTarget = `GET /api/v1/contacts?limit=1\u0000 HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${key}\r\n\r\n`;
    for (const request of [withNulHeader, withNulAuthorization, withNulTarget]) {
      const response = await rawExchange(port, [request]);
      expectErrorJson(asResponse(response), 400);
      expect(JSON.parse(response.body)).toEqual({ error: 'Malformed HTTP request' });
    }
  });

  it('a slow client sending its headers byte by byte is cut off with a 408 JSON, and does not hold up others', async () => {
    const request = `GET /api/v1/contacts HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${key}\r\nX-Slow: ${'s'.repeat(200)}\r\n\r\n`;
    let slowDone = false;
    // One byte every 50 ms would take over 10 s to finish: far past the request timeout.
    const slow = rawExchange(port, [...request], 50).finally(() => {
      slowDone = true;
    });
    for (let i = 0; i < 5; i += 1) {
      const response = await fetchContacts(origin, key, 'limit=1');
      expect(response.status).toBe(200);
    }
    expect(slowDone).toBe(false);
    const response = await slow;
    expectErrorJson(asResponse(response), 408);
    expect(JSON.parse(response.body)).toEqual({ error: 'Request timed out' });
  });

  it('changed nothing in the database', async () => {
    expect(await snapshot(store, user)).toEqual(before);
  });
});
