import { randomBytes } from 'node:crypto';
import { request as httpRequest, type IncomingHttpHeaders } from 'node:http';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, inject, it, vi } from 'vitest';
import { DEFAULT_AUTH_FAILURES_PER_MINUTE } from '../../src/config.js';
import { generateApiKey } from '../../src/domain/api-key.js';
import { RATE_LIMIT_WINDOW_MS } from '../../src/domain/rate-limit.js';
import { createMemoryCounter } from '../../src/rate-limit/memory-counter.js';
import type { Store } from '../../src/store/store.js';
import { createTestDatabase, describeEachBackend, type TestDatabase } from '../support/backends.js';
import { buildTestApp } from '../support/app.js';
import { basic, PROPFIND_BODY } from '../support/dav.js';
import { listContacts } from '../support/requests.js';
import { createKey, createUser, importNumberedContacts, TEST_KEY_PREFIX } from '../support/seed.js';
import { startServerProcess, type ServerProcess } from '../support/server-process.js';

const redisUrl = inject('redisUrl');
const LIMIT = DEFAULT_AUTH_FAILURES_PER_MINUTE;
const REFUSAL = { error: 'Too many failed authentications' };
/** Linux answers from any address of 127/8: a second client address on the same machine. */
const OTHER_ADDRESS = '127.0.0.2';

interface Answer {
  status: number;
  headers: IncomingHttpHeaders;
  body: string;
}

/** One request on a connection of its own (so a cluster's primary spreads them over its workers), sent from `from`. */
function send(url: string, options: { method?: string; headers?: Record<string, string>; body?: string; from?: string }): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const sent = httpRequest(
      url,
      { method: options.method ?? 'GET', headers: options.headers, localAddress: options.from ?? '127.0.0.1', agent: false },
      (response) => {
        const chunks: Buffer[] = [];
        response.on('data', (chunk: Buffer) => chunks.push(chunk));
        response.on('error', reject);
        response.on('end', () =>
          resolve({ status: response.statusCode!, headers: response.headers, body: Buffer.concat(chunks).toString() }),
        );
      },
    );
    sent.on('error', reject);
    sent.end(options.body);
  });
}

type Door = 'rest' | 'mcp' | 'carddav';
const DOORS: Door[] = ['rest', 'mcp', 'carddav'];
const OK: Record<Door, number> = { rest: 200, mcp: 200, carddav: 207 };

/** A request that needs authentication at each door, with an Authorization header as that door's clients send it. */
function knock(door: Door, url: string, credential: string | null, extra: { from?: string; headers?: Record<string, string> } = {}) {
  const headers = { ...extra.headers };
  if (door === 'rest') {
    if (credential !== null) headers.authorization = `Bearer ${credential}`;
    return send(`${url}/api/v1/contacts?limit=1`, { headers, from: extra.from });
  }
  if (door === 'mcp') {
    if (credential !== null) headers.authorization = `Bearer ${credential}`;
    return send(`${url}/mcp`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...headers },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'ping' }),
      from: extra.from,
    });
  }
  if (credential !== null) headers.authorization = basic(credential);
  return send(`${url}/dav/`, {
    method: 'PROPFIND',
    headers: { depth: '0', 'content-type': 'application/xml', ...headers },
    body: PROPFIND_BODY('<D:resourcetype/>'),
    from: extra.from,
  });
}

const wrongKey = () => generateApiKey(TEST_KEY_PREFIX);
/** What /mcp takes besides API keys: an opaque access token of the embedded authorization server. */
const wrongAccessToken = () => randomBytes(32).toString('base64url');

function expectRefused(answer: Answer) {
  expect(answer.status).toBe(429);
  expect(JSON.parse(answer.body)).toEqual(REFUSAL);
  expect(Number(answer.headers['retry-after'])).toBeGreaterThan(0);
  expect(Number(answer.headers['retry-after'])).toBeLessThanOrEqual(60);
}

/** Sends LIMIT wrong credentials over the three doors, then checks what the address and another one get. */
async function guessThenCheck(nextUrl: () => string, key: string) {
  const statuses: number[] = [];
  for (let failure = 0; failure < LIMIT; failure += 1) {
    const door = DOORS[failure % DOORS.length]!;
    const credential = door === 'mcp' && failure % 2 === 0 ? wrongAccessToken() : wrongKey();
    statuses.push((await knock(door, nextUrl(), credential)).status);
  }
  expect(statuses).toEqual(Array<number>(LIMIT).fill(401));

  for (const door of DOORS) {
    expectRefused(await knock(door, nextUrl(), wrongKey()));
    // Refused before the key is read: a right one fares no better, nor one naming another client (no TRUST_PROXY).
    expectRefused(await knock(door, nextUrl(), key));
    expectRefused(await knock(door, nextUrl(), key, { headers: { 'x-forwarded-for': '198.51.100.7' } }));
    expectRefused(await knock(door, nextUrl(), null));
  }

  for (const door of DOORS) {
    expect((await knock(door, nextUrl(), key, { from: OTHER_ADDRESS })).status).toBe(OK[door]);
    expect((await knock(door, nextUrl(), wrongKey(), { from: OTHER_ADDRESS })).status).toBe(401);
  }
}

const SCENARIO = `${LIMIT} wrong credentials over REST, MCP and CardDAV share one count; then the address gets 429 at every door, a right key too, while another address is served`;

/** A user with a few contacts and a key, in the database `store` holds. */
async function seedKey(store: Store): Promise<string> {
  const owner = await createUser(store);
  await importNumberedContacts(store, owner.id, 3, 'Guarded');
  return (await createKey(store, owner.id)).key;
}

describeEachBackend('failed authentications per client address (AUTH_FAILURES_PER_MINUTE)', (db) => {
  let key: string;

  beforeAll(async () => {
    key = await seedKey(db().store);
  });

  describe('one process, the key rate limit off (RATE_LIMIT_PER_MINUTE=0)', () => {
    let server: ServerProcess;

    beforeAll(async () => {
      server = await startServerProcess({ DATABASE_URL: db().databaseUrl, LOG_LEVEL: 'warn', RATE_LIMIT_PER_MINUTE: '0' });
    });
    afterAll(async () => {
      await server?.kill();
    });

    it(SCENARIO, async () => {
      await guessThenCheck(() => server.url, key);
    });
  });

  describe('behind a proxy (TRUST_PROXY=true), a limit of 3', () => {
    let server: ServerProcess;

    beforeAll(async () => {
      server = await startServerProcess({
        DATABASE_URL: db().databaseUrl,
        LOG_LEVEL: 'warn',
        AUTH_FAILURES_PER_MINUTE: '3',
        TRUST_PROXY: 'true',
      });
    });
    afterAll(async () => {
      await server?.kill();
    });

    const client = (address: string) => ({ headers: { 'x-forwarded-for': address } });

    // First: the warning is the process's, at most one every 10 s whatever the address.
    it('logs one warning for a burst of refusals, naming the address', async () => {
      const from = '127.0.0.4';
      for (let sent = 0; sent < 3; sent += 1) expect((await knock('rest', server.url, wrongKey(), { from })).status).toBe(401);
      for (let sent = 0; sent < 5; sent += 1) expectRefused(await knock('carddav', server.url, key, { from }));
      const warnings = () =>
        server.logLines().filter((line) => line.msg === 'refusing a client address over its limit of failed authentications');
      // Log lines may land a moment after the responses.
      await vi.waitFor(() => expect(warnings()).not.toHaveLength(0));
      expect(warnings()).toEqual([expect.objectContaining({ level: 40, address: from, refusalsNotLogged: 0 })]);
    });

    it('counts the forwarded client address, an IPv6 one per /64', async () => {
      for (const address of ['2001:db8:1:2::a', '2001:db8:1:2::b', '2001:db8:1:2:ffff::1']) {
        expect((await knock('rest', server.url, wrongKey(), client(address))).status).toBe(401);
      }
      expectRefused(await knock('mcp', server.url, key, client('2001:db8:1:2:abcd::9')));
      expect((await knock('mcp', server.url, key, client('2001:db8:1:3::a'))).status).toBe(200);
      expect((await knock('rest', server.url, key, client('203.0.113.5'))).status).toBe(200);
    });

    it('counts an IPv4-mapped IPv6 address as its IPv4 address', async () => {
      for (let sent = 0; sent < 3; sent += 1) {
        expect((await knock('carddav', server.url, wrongKey(), client('::ffff:192.0.2.44'))).status).toBe(401);
      }
      expectRefused(await knock('carddav', server.url, key, client('192.0.2.44')));
      expect((await knock('carddav', server.url, key, client('192.0.2.45'))).status).toBe(207);
    });

    it('requests without credentials, as clients send first to learn how to authenticate, do not count', async () => {
      const from = '127.0.0.3';
      for (let sent = 0; sent < 10; sent += 1) {
        for (const door of DOORS) expect((await knock(door, server.url, null, { from })).status).toBe(401);
      }
      for (const door of DOORS) expect((await knock(door, server.url, key, { from })).status).toBe(OK[door]);
    });
  });
});

describeEachBackend('AUTH_FAILURES_PER_MINUTE in the app, with the key rate limit off', (db) => {
  const appWith = (authFailuresPerMinute: number) =>
    buildTestApp(db().store, {
      config: { rateLimit: { authFailuresPerMinute } },
      requestCounter: createMemoryCounter({ windowMs: RATE_LIMIT_WINDOW_MS }),
    });

  it('answers past the limit as the served OpenAPI document declares: 429 with Retry-After, no rate-limit header', async () => {
    const key = await seedKey(db().store);
    const app = await appWith(3);
    try {
      for (let sent = 0; sent < 3; sent += 1) expect((await listContacts(app, wrongKey())).statusCode).toBe(401);
      const refused = await listContacts(app, key);
      expect(refused.statusCode).toBe(429);
      expect(refused.json()).toEqual(REFUSAL);
      expect(refused.headers['retry-after']).toBe('60');
      expect(refused.headers).not.toHaveProperty('ratelimit-policy');
    } finally {
      await app.close();
    }
  });

  it('0 turns the limit off: every wrong key is a 401, and a right key from the same address is served', async () => {
    const key = await seedKey(db().store);
    const app = await appWith(0);
    try {
      for (let sent = 0; sent < LIMIT + 5; sent += 1) expect((await listContacts(app, wrongKey())).statusCode).toBe(401);
      expect((await listContacts(app, key)).statusCode).toBe(200);
    } finally {
      await app.close();
    }
  });
});

describe('failed authentications per client address, counted for several processes', () => {
  let database: TestDatabase;
  let dispose: () => Promise<void>;
  let key: string;

  beforeAll(async () => {
    ({ database, dispose } = await createTestDatabase('sqlite', null));
    key = await seedKey(database.store);
  });
  afterAll(async () => {
    await dispose?.();
  });

  /** Each request to the next server, so a count kept by one process alone would show. */
  const roundRobin = (servers: ServerProcess[]) => {
    let sent = 0;
    return () => servers[(sent += 1) % servers.length]!.url;
  };

  describe('serve --workers 2, counted by the primary', () => {
    let server: ServerProcess;

    beforeAll(async () => {
      server = await startServerProcess({ DATABASE_URL: database.databaseUrl, LOG_LEVEL: 'warn', WORKERS: '2' });
      while ((server.output().match(/listening on/g) ?? []).length < 2) await new Promise((resolve) => setTimeout(resolve, 50));
    });
    afterAll(async () => {
      await server?.kill();
    });

    // A connection per request: the primary hands them to both workers in turn.
    it(SCENARIO, async () => {
      await guessThenCheck(() => server.url, key);
    });
  });

  describe.runIf(redisUrl !== null)('two processes sharing Redis (REDIS_URL), the key rate limit off', () => {
    const prefix = `contacts-api-test:${randomBytes(6).toString('hex')}:`;
    const redis = new Redis(redisUrl ?? 'redis://127.0.0.1:6379', { lazyConnect: true });
    let servers: ServerProcess[] = [];

    beforeAll(async () => {
      const env = {
        DATABASE_URL: database.databaseUrl,
        LOG_LEVEL: 'warn',
        REDIS_URL: redisUrl!,
        RATE_LIMIT_REDIS_PREFIX: prefix,
        RATE_LIMIT_PER_MINUTE: '0',
      };
      servers = await Promise.all([startServerProcess(env), startServerProcess(env)]);
    });
    afterAll(async () => {
      await Promise.all(servers.map((server) => server.kill()));
      const keys = await redis.keys(`${prefix}*`);
      if (keys.length > 0) await redis.del(...keys);
      redis.disconnect();
    });

    it(SCENARIO, async () => {
      await guessThenCheck(roundRobin(servers), key);
      // Keys of their own beside the API keys' counts: one per client address.
      expect((await redis.keys(`${prefix}*`)).sort()).toEqual([
        `${prefix}auth-failure:127.0.0.1`,
        `${prefix}auth-failure:${OTHER_ADDRESS}`,
      ]);
    });
  });
});
