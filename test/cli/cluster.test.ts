import { existsSync, readFileSync } from 'node:fs';
import { afterAll, beforeAll, expect, it, vi } from 'vitest';
import { describeEachBackend } from '../support/backends.js';
import { createKey, createUser, importNumberedContacts } from '../support/seed.js';
import { startServerProcess, type ServerProcess } from '../support/server-process.js';

describeEachBackend('contacts-api serve --workers 2 (node:cluster)', (db) => {
  let server: ServerProcess;
  let key: string;

  beforeAll(async () => {
    const user = await createUser(db().store);
    await importNumberedContacts(db().store, user.id, 120, 'Cluster');
    key = (await createKey(db().store, user.id)).key;
    server = await startServerProcess({
      DATABASE_URL: db().databaseUrl,
      WORKERS: '2',
      RATE_LIMIT_PER_MINUTE: '10',
      LOG_LEVEL: 'info',
      METRICS_TOKEN: 'metrics-token-0123456789',
      WORKER_HEAP_MB: '96',
      MALLOC_ARENA_MAX: '3',
    });
    // The first worker's line resolves the start; wait for the second too.
    while ((server.output().match(/listening on/g) ?? []).length < 2) await new Promise((resolve) => setTimeout(resolve, 50));
  });
  afterAll(async () => {
    await server?.kill();
  });

  // A new connection per request, so the primary spreads them over both workers.
  const list = (query = '') =>
    fetch(`${server.url}/api/v1/contacts${query}`, { headers: { authorization: `Bearer ${key}`, connection: 'close' } });

  it('answers from both workers with the same pages', async () => {
    const responses = await Promise.all(Array.from({ length: 4 }, () => list('?limit=100&offset=50')));
    const bodies = await Promise.all(responses.map(async (response) => (await response.json()) as any));
    expect(bodies[0].pagination).toEqual({ limit: 100, offset: 50, total: 120, nextOffset: null });
    for (const body of bodies) expect(body).toEqual(bodies[0]);
    // Each worker writes its own log lines; they may land a moment after the responses.
    await vi.waitFor(
      async () => {
        const pids = new Set(
          server
            .logLines()
            .filter((line) => line.msg === 'request completed')
            .map((line) => line.pid),
        );
        expect(pids.size).toBe(2);
      },
      { timeout: 2000, interval: 25 },
    );
  });

  it.runIf(existsSync('/proc/self/cmdline'))(
    'starts each worker with V8 old space limited to WORKER_HEAP_MB, growing by doubling, and fixed malloc thresholds',
    async () => {
      const pids = new Set(
        server
          .logLines()
          .filter((line) => line.msg === 'request completed')
          .map((line) => line.pid as number),
      );
      expect(pids.size).toBe(2);
      for (const pid of pids) {
        expect(readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0')).toEqual(
          expect.arrayContaining(['--max-old-space-size=96', '--heap-growing-percent=100', '--max-semi-space-size=4']),
        );
        // The operator's own MALLOC_ARENA_MAX wins over the default of 2.
        expect(readFileSync(`/proc/${pid}/environ`, 'utf8').split('\0')).toEqual(
          expect.arrayContaining(['MALLOC_ARENA_MAX=3', 'MALLOC_MMAP_THRESHOLD_=131072', 'MALLOC_TRIM_THRESHOLD_=131072']),
        );
      }
    },
  );

  it('enforces one rate limit per key across the workers', async () => {
    const statuses: number[] = [];
    for (let i = 0; i < 8; i += 1) statuses.push((await list('?limit=1')).status);
    // Four requests of the first test and six here use the key's ten; the rest are refused, whichever worker answers.
    expect(statuses).toEqual([200, 200, 200, 200, 200, 200, 429, 429]);
  });

  it('serves every worker’s metrics, summed, behind METRICS_TOKEN', async () => {
    const text = await (await fetch(`${server.url}/metrics`, { headers: { authorization: 'Bearer metrics-token-0123456789' } })).text();
    expect(text).toMatch(/contacts_api_http_requests_total\{method="GET",route="\/api\/v1\/contacts",status_code="200"\} 10/);
    expect(text).toMatch(/contacts_api_rate_limited_requests_total 2/);
  });

  it('stops every worker and exits 0 on SIGTERM', async () => {
    server.child.kill('SIGTERM');
    expect(await server.exited).toBe(0);
    expect(server.output()).toMatch(/Contacts Read API: 2 workers/);
  });
});
