import { afterAll, beforeAll, expect, it } from 'vitest';
import type { Store } from '../../src/store/store.js';
import { describeEachBackend } from '../support/backends.js';
import { killAll, processTree } from '../support/process-tree.js';
import { startServerProcess, type ServerProcess } from '../support/server-process.js';
import { latenciesBehindDeadEndpoints, latencyFigures } from '../support/webhook-fairness.js';

/** The bound issue 33 asks for; main's dispatcher gave 1.7–4.1 s with these timeouts. */
const P99_BOUND_MS = 2000;

/**
 * One owner's dead endpoints cost the others nothing: `serve` (a primary and two workers, as real processes) delivers
 * for owner A, whose 40 endpoints sit on a receiver that accepts connections and never answers (each attempt lasts
 * the whole 5 s timeout, and A's retries come back every second), and for owner B, whose one endpoint answers at once.
 * B's events arrive within the bound all along, however many slots A's timeouts would take.
 */
describeEachBackend('one owner’s dead endpoints delay no other owner', (db) => {
  let store: Store;
  let server: ServerProcess;

  beforeAll(async () => {
    store = db().store;
    server = await startServerProcess({
      DATABASE_URL: db().databaseUrl,
      WORKERS: '2',
      WEBHOOKS_ALLOW_PRIVATE_URLS: 'true',
      WEBHOOK_TIMEOUT_MS: '5000',
      WEBHOOK_RETRY_SCHEDULE: Array.from({ length: 20 }, () => '1s').join(','),
      LOG_LEVEL: 'warn',
    });
  });
  afterAll(async () => {
    if (!server) return;
    killAll(processTree(server.child.pid!));
    await server.exited;
  });

  it(`delivers B's events with a p99 under ${P99_BOUND_MS} ms while A's 40 endpoints time out`, async () => {
    const { latencies, deadOwnerId } = await latenciesBehindDeadEndpoints(store, {
      deadEndpoints: 40,
      writes: 100,
      gapMs: 150,
      deliveryTimeoutMs: 60_000,
    });
    // The scenario holds only if A's endpoints were attempted, and timed out, meanwhile.
    const timedOut = [];
    for (const endpoint of await store.webhooks.listByOwner(deadOwnerId)) {
      timedOut.push(...(await store.webhooks.listDeliveries(endpoint.id, 100)).filter((attempt) => attempt.error?.includes('timed out')));
    }
    expect(timedOut.length).toBeGreaterThanOrEqual(8);
    const figures = latencyFigures(latencies);
    expect(figures.p99, JSON.stringify(figures)).toBeLessThan(P99_BOUND_MS);
  }, 120_000);
});
