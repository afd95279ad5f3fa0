import { afterAll, beforeAll, describe, expect, inject, it, vi } from 'vitest';
import type { Store, User } from '../../src/store/store.js';
import { createTestDatabase, type TestDatabase } from '../support/backends.js';
import { skipClusterTests, startCluster, startStreamingReplica, type StreamingReplica, type TestCluster } from '../support/pg-cluster.js';
import { fetchContacts } from '../support/requests.js';
import { createKey, createUser, importNumberedContacts } from '../support/seed.js';
import { startServerProcess, type ServerProcess } from '../support/server-process.js';

const FALLBACK_WARNING = 'read replica unavailable; contact reads fall back to the primary';
const RECOVERED = 'read replica is answering again; contact reads go to it';
const postgresAdminUrl = inject('postgresAdminUrl');

describe.runIf(!skipClusterTests('read replica tests', postgresAdminUrl))('DATABASE_READ_URL on a real streaming replica', () => {
  let primary: TestCluster;
  let database: TestDatabase;
  let dispose: () => Promise<void>;
  let replica: StreamingReplica;
  let server: ServerProcess;
  let store: Store;
  let user: User;
  let firstKey: { id: string; key: string };
  let secondKey: { id: string; key: string };
  let databaseName: string;

  const listedTotal = async (key: string): Promise<number> => {
    const response = await fetchContacts(server.url, key, 'limit=100');
    expect(response.status).toBe(200);
    return ((await response.json()) as { pagination: { total: number } }).pagination.total;
  };
  const primaryTotal = async () => (await store.contacts.listPage(user.id, { limit: 1, offset: 0 })).total;
  const logged = (message: string) => server.logLines().filter((line) => line.msg === message);

  beforeAll(async () => {
    // A primary of its own: a base backup of the shared server would copy whatever else it holds.
    primary = await startCluster();
    ({ database, dispose } = await createTestDatabase('postgres', primary.url()));
    store = database.store;
    databaseName = new URL(database.databaseUrl).pathname.slice(1);
    user = await createUser(store);
    firstKey = await createKey(store, user.id);
    await importNumberedContacts(store, user.id, 2, 'Seed');
    replica = await startStreamingReplica(primary.url());
    server = await startServerProcess({
      DATABASE_URL: database.databaseUrl,
      DATABASE_READ_URL: replica.url(databaseName),
      LOG_LEVEL: 'info',
      // Every read reaches a database, so the tests see which one answers (a cached listing would answer alone).
      LISTING_CACHE_TTL_MS: '0',
    });
  });
  afterAll(async () => {
    await server?.kill();
    await replica?.dispose();
    await dispose?.();
    await primary?.dispose();
  });

  it('serves contact reads from the replica: a contact added on the primary while replay is paused is not listed yet', async () => {
    expect(await listedTotal(firstKey.key)).toBe(2);
    await replica.pauseReplay();
    await importNumberedContacts(store, user.id, 1, 'Late', Date.parse('2024-02-01T00:00:00.000Z'));
    expect(await primaryTotal()).toBe(3);
    expect(await listedTotal(firstKey.key)).toBe(2);
  });

  it('checks keys on the primary: a key created and a key revoked while the replica lags are honoured within a second', async () => {
    secondKey = await createKey(store, user.id);
    await store.keys.revoke(firstKey.id);
    const onReplica = await replica.query<{ id: string; revoked_at: string | null }>(
      'SELECT id::text, revoked_at::text FROM api_keys WHERE id = ANY($1::uuid[])',
      [[firstKey.id, secondKey.id]],
      databaseName,
    );
    expect(onReplica).toEqual([{ id: firstKey.id, revoked_at: null }]);

    expect((await fetchContacts(server.url, secondKey.key, 'limit=100')).status).toBe(200);
    // The replica still has the key active and replays nothing while paused: only the primary can refuse it.
    await vi.waitFor(
      async () => {
        const refused = await fetchContacts(server.url, firstKey.key, 'limit=100');
        expect(refused.status).toBe(401);
        expect(await refused.json()).toEqual({ error: 'Invalid or inactive API key' });
      },
      { timeout: 1000, interval: 25 },
    );
  });

  it('shows a change made on the primary within one second once the replica replays (the lag stays under the 1-second rule)', async () => {
    await replica.resumeReplay();
    await vi.waitFor(async () => expect(await listedTotal(secondKey.key)).toBe(3), { timeout: 1000, interval: 25 });
  });

  it('keeps answering from the primary when the replica goes away, logging the fallback once', async () => {
    await replica.stop('fast');
    for (let i = 0; i < 10; i += 1) expect(await listedTotal(secondKey.key)).toBe(3);
    // The server's log lines reach this process a moment after its responses.
    const warnings = await vi.waitFor(
      async () => {
        const lines = logged(FALLBACK_WARNING);
        expect(lines).toHaveLength(1);
        return lines;
      },
      { timeout: 2000, interval: 25 },
    );
    expect(warnings[0]).toMatchObject({ level: 40, fallbacks: 1, reason: expect.any(String) });
  });

  it('returns contact reads to the replica once it is back, with no restart', async () => {
    await replica.start();
    await replica.pauseReplay();
    await importNumberedContacts(store, user.id, 1, 'Later', Date.parse('2024-03-01T00:00:00.000Z'));
    expect(await primaryTotal()).toBe(4);
    // The stale total can only come from the paused replica: reads are back on it.
    await vi.waitFor(async () => expect(await listedTotal(secondKey.key)).toBe(3), { timeout: 30_000, interval: 25 });
    await vi.waitFor(async () => expect(logged(RECOVERED)).toHaveLength(1), { timeout: 2000, interval: 25 });
    await replica.resumeReplay();
    await vi.waitFor(async () => expect(await listedTotal(secondKey.key)).toBe(4), { timeout: 1000, interval: 25 });
  });
});
