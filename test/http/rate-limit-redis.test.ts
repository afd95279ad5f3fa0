import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { RATE_LIMIT_WINDOW_MS } from '../../src/domain/rate-limit.js';
import { createMetrics } from '../../src/metrics/metrics.js';
import { connectRedisCounter } from '../../src/rate-limit/redis-counter.js';
import { buildTestApp } from '../support/app.js';
import { createTestDatabase, type TestDatabase } from '../support/backends.js';
import { freePort } from '../support/listen.js';
import { captureLogs } from '../support/log-capture.js';
import { fetchContacts, listContacts } from '../support/requests.js';
import { createKey, createUser } from '../support/seed.js';
import { startServerProcess, type ServerProcess } from '../support/server-process.js';

const redisUrl = inject('redisUrl');
const LIMIT = 6;

describe.runIf(redisUrl !== null)('rate limit shared through Redis by two server processes', () => {
  const prefix = `contacts-api-test:${randomBytes(6).toString('hex')}:`;
  let database: TestDatabase;
  let dispose: () => Promise<void>;
  let servers: ServerProcess[] = [];
  let key: string;

  beforeAll(async () => {
    ({ database, dispose } = await createTestDatabase('sqlite', null));
    const owner = await createUser(database.store);
    key = (await createKey(database.store, owner.id)).key;
    const env = {
      DATABASE_URL: database.databaseUrl,
      REDIS_URL: redisUrl!,
      RATE_LIMIT_REDIS_PREFIX: prefix,
      RATE_LIMIT_PER_MINUTE: String(LIMIT),
      OAUTH_REGISTRATIONS_PER_MINUTE: String(LIMIT),
      LOG_LEVEL: 'warn',
    };
    servers = await Promise.all([startServerProcess(env), startServerProcess(env)]);
  });
  afterAll(async () => {
    await Promise.all(servers.map((server) => server.kill()));
    const redis = new Redis(redisUrl!);
    const keys = await redis.keys(`${prefix}*`);
    if (keys.length > 0) await redis.del(...keys);
    redis.disconnect();
    await dispose?.();
  });

  it('enforces one combined count for a key, whichever instance answers', async () => {
    const remaining: string[] = [];
    for (let sent = 0; sent < LIMIT; sent += 1) {
      const server = servers[sent % 2]!;
      const response = await fetchContacts(server.url, key, 'limit=1');
      expect(response.status).toBe(200);
      remaining.push(response.headers.get('x-ratelimit-remaining')!);
    }
    expect(remaining).toEqual(['5', '4', '3', '2', '1', '0']);
    for (const server of servers) {
      const refused = await fetchContacts(server.url, key, 'limit=1');
      expect(refused.status).toBe(429);
      expect(await refused.json()).toEqual({ error: 'Rate limit exceeded' });
      expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(0);
      expect(refused.headers.get('ratelimit')).toMatch(/^"default";r=0;t=\d+$/);
    }
  });

  it('counts OAuth registrations per client address across both instances too', async () => {
    const statuses: number[] = [];
    for (let sent = 0; sent < LIMIT + 2; sent += 1) {
      const response = await fetch(`${servers[sent % 2]!.url}/oauth/register`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ redirect_uris: ['http://127.0.0.1:9/cb'], token_endpoint_auth_method: 'none' }),
      });
      statuses.push(response.status);
    }
    expect(statuses).toEqual([...Array<number>(LIMIT).fill(201), 429, 429]);
  });
});

describe('rate limit when Redis is unreachable', () => {
  it('fails open: requests succeed, one warning is logged, and the fail-open metric counts each request', async () => {
    const { database, dispose } = await createTestDatabase('sqlite', null);
    const counter = await connectRedisCounter({
      url: `redis://127.0.0.1:${await freePort()}`,
      prefix: 'unused:',
      windowMs: RATE_LIMIT_WINDOW_MS,
    });
    const logs = captureLogs('warn');
    const metrics = createMetrics();
    const app = await buildTestApp(database.store, {
      logger: logs.logger,
      metrics,
      config: { rateLimit: { perMinute: LIMIT } },
      requestCounter: counter,
    });
    try {
      const owner = await createUser(database.store);
      const { key } = await createKey(database.store, owner.id);
      for (let sent = 0; sent < LIMIT + 3; sent += 1) {
        const response = await listContacts(app, key);
        expect(response.statusCode).toBe(200);
        expect(response.headers['ratelimit-policy']).toBe(`"default";q=${LIMIT};w=60`);
        expect(response.headers).not.toHaveProperty('ratelimit');
      }
      const warnings = logs.lines().filter((line) => line.level === 40);
      expect(warnings).toHaveLength(1);
      expect(warnings[0]).toMatchObject({ counter: 'redis', msg: expect.stringMatching(/allowed without a limit/) });
      expect((await metrics.rateLimitFailOpen.get()).values[0]!.value).toBe(LIMIT + 3);
    } finally {
      await app.close();
      await counter.close();
      await dispose();
    }
  });
});
