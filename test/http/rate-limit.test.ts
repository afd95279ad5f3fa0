import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RATE_LIMIT_WINDOW_MS } from '../../src/domain/rate-limit.js';
import { createMemoryCounter } from '../../src/rate-limit/memory-counter.js';
import type { RequestCounter } from '../../src/rate-limit/request-counter.js';
import type { Store } from '../../src/store/store.js';
import { buildTestApp } from '../support/app.js';
import { createTestDatabase, describeEachBackend } from '../support/backends.js';
import { postMcp } from '../support/mcp-request.js';
import { listContacts } from '../support/requests.js';
import { createKey, createUser, importNumberedContacts } from '../support/seed.js';

const LIMIT = 5;

/** An in-memory counter on a clock the test moves, recording which keys were counted. */
function testCounter() {
  const clock = { now: 1_000_000 };
  const memory = createMemoryCounter({ windowMs: RATE_LIMIT_WINDOW_MS, now: () => clock.now });
  const counted: string[] = [];
  const counter: RequestCounter = {
    kind: 'memory',
    hit: (key) => {
      counted.push(key);
      return memory.hit(key);
    },
    peek: (key) => memory.peek(key),
    close: () => memory.close(),
  };
  return { clock, counter, counted };
}

describeEachBackend('rate limit per API key, in memory', (db) => {
  let app: FastifyInstance;
  let store: Store;
  let ownerId: string;
  let harness: ReturnType<typeof testCounter>;

  beforeAll(async () => {
    store = db().store;
    ownerId = (await createUser(store)).id;
    await importNumberedContacts(store, ownerId, 2, 'Limited');
    harness = testCounter();
    app = await buildTestApp(store, { config: { rateLimit: { perMinute: LIMIT } }, requestCounter: harness.counter });
  });
  afterAll(async () => {
    await app?.close();
  });

  it('answers the first LIMIT requests with 200 and decreasing headers, then 429 with Retry-After', async () => {
    const { key } = await createKey(store, ownerId);
    for (let sent = 1; sent <= LIMIT; sent += 1) {
      const response = await listContacts(app, key);
      expect(response.statusCode).toBe(200);
      expect(response.headers['ratelimit-policy']).toBe(`"default";q=${LIMIT};w=60`);
      expect(response.headers.ratelimit).toBe(`"default";r=${LIMIT - sent};t=60`);
      expect(response.headers['x-ratelimit-limit']).toBe(String(LIMIT));
      expect(response.headers['x-ratelimit-remaining']).toBe(String(LIMIT - sent));
      expect(response.headers['x-ratelimit-reset']).toBe('60');
    }
    harness.clock.now += 20_000;
    const refused = await listContacts(app, key);
    expect(refused.statusCode).toBe(429);
    expect(refused.json()).toEqual({ error: 'Rate limit exceeded' });
    expect(refused.headers['content-type']).toBe('application/json; charset=utf-8');
    expect(refused.headers['retry-after']).toBe('40');
    expect(refused.headers.ratelimit).toBe('"default";r=0;t=40');
    expect(refused.headers['x-ratelimit-remaining']).toBe('0');
  });

  it('opens a new window once the old one ends', async () => {
    const { key } = await createKey(store, ownerId);
    for (let sent = 0; sent <= LIMIT; sent += 1) await listContacts(app, key);
    expect((await listContacts(app, key)).statusCode).toBe(429);
    harness.clock.now += RATE_LIMIT_WINDOW_MS;
    const response = await listContacts(app, key);
    expect(response.statusCode).toBe(200);
    expect(response.headers.ratelimit).toBe(`"default";r=${LIMIT - 1};t=60`);
  });

  it('counts each key on its own, even two keys of the same user', async () => {
    const first = await createKey(store, ownerId);
    const second = await createKey(store, ownerId);
    for (let sent = 0; sent < LIMIT; sent += 1) await listContacts(app, first.key);
    expect((await listContacts(app, first.key)).statusCode).toBe(429);
    expect((await listContacts(app, second.key)).headers['x-ratelimit-remaining']).toBe(String(LIMIT - 1));
  });

  it('never counts a request refused with 401 or 403', async () => {
    const revoked = await createKey(store, ownerId);
    await store.keys.revoke(revoked.id);
    const unscoped = await createKey(store, ownerId, { scopes: [] });
    const expired = await createKey(store, ownerId, { expiresAt: '2020-01-01T00:00:00.000Z' });
    const freeUser = await createUser(store, 'free');
    const onFreePlan = await createKey(store, freeUser.id);
    const before = harness.counted.length;
    for (let round = 0; round < LIMIT + 2; round += 1) {
      expect((await listContacts(app, null)).statusCode).toBe(401);
      expect((await listContacts(app, revoked.key)).statusCode).toBe(401);
      expect((await listContacts(app, expired.key)).statusCode).toBe(401);
      expect((await listContacts(app, unscoped.key)).statusCode).toBe(403);
      expect((await listContacts(app, onFreePlan.key)).statusCode).toBe(403);
    }
    expect(harness.counted.length).toBe(before);
    const refused = await listContacts(app, onFreePlan.key);
    expect(refused.headers).not.toHaveProperty('ratelimit');
    expect(refused.headers).not.toHaveProperty('x-ratelimit-remaining');

    // Upgraded, the key that was refused LIMIT + 2 times still has its whole quota.
    await store.users.setPlan(freeUser.id, 'pro');
    const allowed = await listContacts(app, onFreePlan.key);
    expect(allowed.statusCode).toBe(200);
    expect(allowed.headers['x-ratelimit-remaining']).toBe(String(LIMIT - 1));
  });

  it('shares each key’s limit with the MCP endpoint', async () => {
    const { key } = await createKey(store, ownerId);
    const mcp = () => postMcp(app, key, { jsonrpc: '2.0', id: 1, method: 'tools/list' });
    expect((await mcp()).headers['x-ratelimit-remaining']).toBe(String(LIMIT - 1));
    for (let sent = 1; sent < LIMIT; sent += 1) expect((await listContacts(app, key)).statusCode).toBe(200);
    const refused = await mcp();
    expect(refused.statusCode).toBe(429);
    expect(refused.json()).toEqual({ error: 'Rate limit exceeded' });
    expect(refused.headers['retry-after']).toBeDefined();
  });

  it('counts a request that passed authentication but had a bad query, and says so in its headers', async () => {
    const { key, id } = await createKey(store, ownerId);
    const response = await listContacts(app, key, 'limit=500');
    expect(response.statusCode).toBe(400);
    expect(response.headers['x-ratelimit-remaining']).toBe(String(LIMIT - 1));
    expect(harness.counted.at(-1)).toBe(id);
  });
});

describe('rate limit of 0 per minute', () => {
  it('turns rate limiting off: no counting, no headers, no 429', async () => {
    const { database, dispose } = await createTestDatabase('sqlite', null);
    const harness = testCounter();
    const app = await buildTestApp(database.store, { config: { rateLimit: { perMinute: 0 } }, requestCounter: harness.counter });
    try {
      const owner = await createUser(database.store);
      const { key } = await createKey(database.store, owner.id);
      for (let sent = 0; sent < 20; sent += 1) {
        const response = await listContacts(app, key);
        expect(response.statusCode).toBe(200);
        expect(Object.keys(response.headers).filter((name) => name.includes('ratelimit'))).toEqual([]);
      }
      expect(harness.counted).toEqual([]);
    } finally {
      await app.close();
      await dispose();
    }
  });
});
