import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { runLoadMix, type LoadMixOptions } from '../../bench/load-mix.js';
import { generateDemoContacts } from '../../src/demo/demo-contacts.js';
import { createTestDatabase, type TestDatabase } from '../support/backends.js';
import { killAll, processTree } from '../support/process-tree.js';
import { createKey, createUser } from '../support/seed.js';
import { startServerProcess, type ServerProcess } from '../support/server-process.js';

const CONTACTS = 1_000;
const CONNECTIONS = 64;
const SECONDS = 5;

/**
 * Real processes under the security review's load: `serve` with two workers whose heap is as small as it may be set,
 * so what exhausts memory shows within seconds. bench/hostile-mix.ts runs the same mix at 256 connections for 30 s.
 */
describe('serve --workers 2 under hostile load', () => {
  let database: TestDatabase;
  let dispose: () => Promise<void>;
  let key: string;
  let server: ServerProcess | undefined;

  beforeAll(async () => {
    ({ database, dispose } = await createTestDatabase('sqlite'));
    const owner = await createUser(database.store);
    await database.store.contacts.importContacts(owner.id, generateDemoContacts(CONTACTS, 7, new Date()));
    key = (await createKey(database.store, owner.id)).key;
  });
  afterEach(async () => {
    if (server) killAll(processTree(server.child.pid!));
    await server?.kill();
    server = undefined;
  });
  afterAll(async () => {
    await dispose?.();
  });

  /** Runs the load against a fresh server; the worker processes must be the same ones at the end. */
  async function underLoad(env: NodeJS.ProcessEnv, mix?: LoadMixOptions['mix']) {
    server = await startServerProcess({
      DATABASE_URL: database.databaseUrl,
      WORKERS: '2',
      WORKER_HEAP_MB: '64',
      LOG_LEVEL: 'warn',
      // Every connection comes from one address, which would be refused outright after 60 bad keys: the mix is about
      // what the requests themselves cost.
      AUTH_FAILURES_PER_MINUTE: '0',
      ...env,
    });
    const pids = processTree(server.child.pid!);
    expect(pids).toHaveLength(3);
    const outcome = await runLoadMix({ url: server.url, key, contactCount: CONTACTS, connections: CONNECTIONS, seconds: SECONDS, mix });
    const exits = server.logLines().filter((line) => line.msg === 'worker exited; starting another');
    return { outcome, exits, pidsBefore: pids, pidsAfter: processTree(server.child.pid!) };
  }

  it('a flood of MCP batches with the rate limit off crashes no worker and gets only 200, or 503 with Retry-After', async () => {
    // Room for 3 batches a worker, against 32 at once.
    const { outcome, exits, pidsBefore, pidsAfter } = await underLoad({ RATE_LIMIT_PER_MINUTE: '0', MCP_INFLIGHT_MB: '4' }, ['mcp-batch']);
    expect(exits).toEqual([]);
    expect(outcome.socketErrors).toBe(0);
    expect(pidsAfter).toEqual(pidsBefore);
    expect(outcome.unexplained5xx).toBe(0);
    expect(Object.keys(outcome.statuses).filter((status) => status !== '200' && status !== '503')).toEqual([]);
    // Answered, not left waiting: those refused at once, those let in within the run.
    expect(outcome.answers).toBeGreaterThanOrEqual(CONNECTIONS);
  });

  it.each([
    ['off', '0'],
    ['on', '600'],
  ])(
    'the review mix (pages, MCP calls and batches, probes, bad keys) with the rate limit %s: no crash, no 5xx but 503 with Retry-After',
    async (_, perMinute) => {
      const { outcome, exits, pidsBefore, pidsAfter } = await underLoad({ RATE_LIMIT_PER_MINUTE: perMinute });
      expect(exits).toEqual([]);
      expect(pidsAfter).toEqual(pidsBefore);
      expect(outcome.unexplained5xx).toBe(0);
      expect(outcome.statuses['401']).toBeGreaterThan(0);
    },
  );
});
