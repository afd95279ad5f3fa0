import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LEASE_SHARE, MAX_LEASE, leaseFor } from '../../src/cluster/primary-counter.js';
import { createTestDatabase, type TestDatabase } from '../support/backends.js';
import { createKey, createUser, importNumberedContacts } from '../support/seed.js';
import { startServerProcess, type ServerProcess } from '../support/server-process.js';

describe('the requests a primary counts in advance for a worker', () => {
  it('is 1/LEASE_SHARE of what the window has left, at most MAX_LEASE, and none near the limit or without one', () => {
    expect(leaseFor(1, 1000)).toBe(Math.floor(999 / LEASE_SHARE));
    expect(leaseFor(1, 1_000_000)).toBe(MAX_LEASE);
    expect(leaseFor(1000 - LEASE_SHARE + 1, 1000)).toBe(0);
    expect(leaseFor(1001, 1000)).toBe(0);
    expect(leaseFor(1, undefined)).toBe(0);
  });
});

// Issue 35: a cluster's workers count blocks the primary gave them. Whichever worker answers, no key passes its limit,
// and a block left unused in one worker refuses at most its size early.
describe('serve --workers 2: a key far from its limit, counted in blocks', () => {
  const LIMIT = 640;
  let database: TestDatabase;
  let dispose: () => Promise<void>;
  let server: ServerProcess;
  let key: string;

  beforeAll(async () => {
    ({ database, dispose } = await createTestDatabase('sqlite'));
    const user = await createUser(database.store);
    await importNumberedContacts(database.store, user.id, 3, 'Blocks');
    key = (await createKey(database.store, user.id)).key;
    server = await startServerProcess({ DATABASE_URL: database.databaseUrl, WORKERS: '2', RATE_LIMIT_PER_MINUTE: String(LIMIT) });
    while ((server.output().match(/listening on/g) ?? []).length < 2) await new Promise((resolve) => setTimeout(resolve, 50));
  });
  afterAll(async () => {
    await server?.kill();
    await dispose?.();
  });

  it('never lets a key past its limit, and refuses early at most one block per worker', async () => {
    const statuses: number[] = [];
    const remaining: number[] = [];
    // New connections in parallel, so that both workers answer and each holds a block while the other counts.
    for (let round = 0; round < (LIMIT + 80) / 8; round += 1) {
      const answers = await Promise.all(
        Array.from({ length: 8 }, () =>
          fetch(`${server.url}/api/v1/contacts?limit=1`, { headers: { authorization: `Bearer ${key}`, connection: 'close' } }),
        ),
      );
      for (const answer of answers) {
        statuses.push(answer.status);
        if (answer.status === 200) remaining.push(Number(answer.headers.get('x-ratelimit-remaining')));
        await answer.arrayBuffer();
      }
    }
    const allowed = statuses.filter((status) => status === 200).length;
    expect(allowed).toBeLessThanOrEqual(LIMIT);
    expect(allowed).toBeGreaterThanOrEqual(LIMIT - 2 * Math.floor(LIMIT / LEASE_SHARE));
    expect(statuses.filter((status) => status !== 200 && status !== 429)).toEqual([]);
    // The window's last requests are counted one by one, whichever worker answers: its last one says none remain.
    expect(Math.min(...remaining)).toBe(0);
    expect(new Set(remaining).size).toBe(remaining.length);
  });
});
