import pg from 'pg';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { DATABASE_BUSY_MESSAGE } from '../../src/domain/errors.js';
import { createTestDatabase, type TestDatabase } from '../support/backends.js';
import { fetchContacts } from '../support/requests.js';
import { createKey, createUser, importNumberedContacts } from '../support/seed.js';
import { startServerProcess, type ServerProcess } from '../support/server-process.js';

const POOL_SIZE = 1;
const QUEUE_LIMIT = 2;
const REQUESTS = 8;
/** A refusal is immediate; this only has to be far under the lock's hold and the server's statement timeout. */
const AT_ONCE_MS = 1_000;

/**
 * PostgreSQL saturated: every connection of the server's pool busy (here: its one connection stuck behind a lock
 * another session holds) and its queue full. Each further request is refused at once with 503 and Retry-After, and
 * none is held; those in the queue are answered when the database frees up.
 */
describe.runIf(inject('postgresAdminUrl') !== null)('PostgreSQL: every connection busy and the queue full', () => {
  let database: TestDatabase;
  let dispose: () => Promise<void>;
  let server: ServerProcess;
  let key: string;

  beforeAll(async () => {
    ({ database, dispose } = await createTestDatabase('postgres'));
    const user = await createUser(database.store);
    key = (await createKey(database.store, user.id)).key;
    await importNumberedContacts(database.store, user.id, 300, 'Saturated');
    server = await startServerProcess({
      DATABASE_URL: database.databaseUrl,
      DB_POOL_SIZE: String(POOL_SIZE),
      DB_QUEUE_LIMIT: String(QUEUE_LIMIT),
      // Every request asks the database for the listing state; the key stays cached through the test.
      LISTING_CACHE_TTL_MS: '0',
      KEY_CACHE_TTL_MS: '900',
      DB_STATEMENT_TIMEOUT_MS: '20000',
      RATE_LIMIT_PER_MINUTE: '0',
    });
  });
  afterAll(async () => {
    await server?.kill();
    await dispose?.();
  });

  it(`answers ${REQUESTS - POOL_SIZE - QUEUE_LIMIT} of ${REQUESTS} requests 503 with Retry-After at once, and the queued ones once the database frees up`, async () => {
    const page = (offset: number) => fetchContacts(server.url, key, `limit=5&offset=${offset}`);
    expect((await page(0)).status).toBe(200);
    const locker = new pg.Client({ connectionString: database.databaseUrl });
    await locker.connect();
    try {
      await locker.query('BEGIN');
      await locker.query('LOCK TABLE owner_listing IN ACCESS EXCLUSIVE MODE');
      const started = performance.now();
      const answers = Array.from({ length: REQUESTS }, async (_, index) => {
        const response = await page(5 * (index + 1));
        return { response, body: await response.text(), ms: performance.now() - started };
      });
      const settled: Awaited<(typeof answers)[number]>[] = [];
      for (const answer of answers) void answer.then((done) => settled.push(done));
      await new Promise((resolve) => setTimeout(resolve, AT_ONCE_MS));
      // Held only by the lock: the pool's connection and the queue behind it.
      expect(settled).toHaveLength(REQUESTS - POOL_SIZE - QUEUE_LIMIT);
      for (const { response, body, ms } of settled) {
        expect(response.status).toBe(503);
        expect(response.headers.get('retry-after')).toBe('1');
        expect(JSON.parse(body)).toEqual({ error: DATABASE_BUSY_MESSAGE });
        expect(ms).toBeLessThan(AT_ONCE_MS);
      }
      await locker.query('COMMIT');
      const all = await Promise.all(answers);
      expect(all.filter(({ response }) => response.status === 200)).toHaveLength(POOL_SIZE + QUEUE_LIMIT);
    } finally {
      await locker.end();
    }
    expect((await page(0)).status).toBe(200);
    const warnings = server.logLines().filter((line) => line.msg?.includes('statements already waiting'));
    expect(warnings.length).toBeGreaterThan(0);
  });
});
