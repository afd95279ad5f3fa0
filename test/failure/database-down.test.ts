import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { openStore } from '../../src/store/open-store.js';
import { parseDatabaseUrl } from '../../src/domain/database-url.js';
import { bearer } from '../support/app.js';
import { skipClusterTests, startCluster, type TestCluster } from '../support/pg-cluster.js';
import { createKey, createUser, importNumberedContacts } from '../support/seed.js';
import { startServerProcess, type ServerProcess } from '../support/server-process.js';

/** A correctness bound, not a performance claim: no request may hang, whatever the database does. */
const NO_HANG_MS = 10_000;
const REQUEST_TIMEOUT_MS = 2_000;
/** Words of driver and database errors that must never reach a client. */
const INTERNALS = /ECONN|terminat|postgres|pg_|sql|connect|socket|127\.0\.0\.1|timeout exceeded|stack|\bat \w/i;

interface Outcome {
  status: number;
  ms: number;
  contentType: string;
  body: string;
}

/**
 * Requests the contact list from `concurrency` loops, one after another in each, until stop() or a bound
 * (count and time) is reached. A request that fails at the socket is recorded as status 0.
 */
function requestLoop(url: string, key: string, concurrency: number) {
  const outcomes: Outcome[] = [];
  let stopped = false;
  const deadline = Date.now() + 120_000;
  const loop = async () => {
    while (!stopped && outcomes.length < 20_000 && Date.now() < deadline) {
      const started = performance.now();
      try {
        const response = await fetch(`${url}/api/v1/contacts?limit=5`, {
          headers: bearer(key),
          signal: AbortSignal.timeout(NO_HANG_MS + 5_000),
        });
        const body = await response.text();
        outcomes.push({
          status: response.status,
          ms: performance.now() - started,
          contentType: response.headers.get('content-type') ?? '',
          body,
        });
      } catch (error) {
        outcomes.push({ status: 0, ms: performance.now() - started, contentType: '', body: String(error) });
      }
    }
  };
  const loops = Array.from({ length: concurrency }, loop);
  return {
    outcomes,
    /** Waits until `done(outcomes)` holds; throws after `withinMs`. */
    async until(done: (outcomes: Outcome[]) => boolean, withinMs: number, what: string): Promise<number> {
      for (const limit = Date.now() + withinMs; !done(outcomes); await new Promise((resolve) => setTimeout(resolve, 20))) {
        if (Date.now() > limit) throw new Error(`request loop: ${what} did not happen within ${withinMs} ms`);
      }
      return outcomes.length;
    },
    async stop(): Promise<Outcome[]> {
      stopped = true;
      await Promise.all(loops);
      return outcomes;
    },
  };
}

const lastAllOk = (count: number) => (outcomes: Outcome[]) =>
  outcomes.length >= count && outcomes.slice(-count).every((outcome) => outcome.status === 200);

/** Every answer is a 200, or a 5xx whose body is exactly `{ error }` in words safe to show. */
function expectOnlySuccessOrSafe5xx(outcomes: Outcome[]): void {
  expect(outcomes.filter((outcome) => outcome.status === 0)).toEqual([]);
  expect(outcomes.filter((outcome) => outcome.ms >= NO_HANG_MS)).toEqual([]);
  for (const outcome of outcomes.filter((o) => o.status !== 200)) {
    expect(outcome.status).toBeGreaterThanOrEqual(500);
    expect(outcome.contentType).toMatch(/^application\/json/);
    const body = JSON.parse(outcome.body) as Record<string, unknown>;
    expect(Object.keys(body)).toEqual(['error']);
    expect(typeof body.error).toBe('string');
    expect(body.error).not.toMatch(INTERNALS);
  }
}

const postgresAdminUrl = inject('postgresAdminUrl');

describe.runIf(!skipClusterTests('database-down tests', postgresAdminUrl))('PostgreSQL failing under load', () => {
  let cluster: TestCluster;
  let server: ServerProcess;
  let key: string;

  beforeAll(async () => {
    cluster = await startCluster();
    const store = await openStore(parseDatabaseUrl(cluster.url()));
    try {
      await store.migrate();
      const user = await createUser(store);
      key = (await createKey(store, user.id)).key;
      await importNumberedContacts(store, user.id, 20, 'Steady');
    } finally {
      await store.close();
    }
    server = await startServerProcess({
      DATABASE_URL: cluster.url(),
      LOG_LEVEL: 'silent',
      REQUEST_TIMEOUT_MS: String(REQUEST_TIMEOUT_MS),
      RATE_LIMIT_PER_MINUTE: '0',
    });
  });
  afterAll(async () => {
    await server?.kill();
    await cluster?.dispose();
  });

  it('answers 5xx JSON at once while the database is killed and down, then recovers by itself when it returns', async () => {
    const pid = server.child.pid;
    const load = requestLoop(server.url, key, 4);
    await load.until(lastAllOk(20), 20_000, '20 successes before the kill');
    await cluster.stop('immediate');
    const killedAt = load.outcomes.length;
    await load.until((outcomes) => outcomes.slice(killedAt).filter((o) => o.status >= 500).length >= 40, 20_000, '40 failures while down');
    const readiness = await fetch(`${server.url}/readyz`);
    expect(readiness.status).toBe(503);
    await cluster.start();
    await load.until(lastAllOk(40), 30_000, '40 successes in a row after the restart');
    const outcomes = await load.stop();

    expectOnlySuccessOrSafe5xx(outcomes);
    expect((await fetch(`${server.url}/readyz`)).status).toBe(200);
    expect(server.child.exitCode).toBeNull();
    expect(server.child.pid).toBe(pid);
  });

  it('answers 503 JSON within the request timeout while the database hangs, then recovers when it resumes', async () => {
    const load = requestLoop(server.url, key, 4);
    await load.until(lastAllOk(20), 20_000, '20 successes before the freeze');
    cluster.freeze();
    const frozenAt = load.outcomes.length;
    try {
      await load.until(
        (outcomes) => outcomes.slice(frozenAt).filter((o) => o.status === 503).length >= 8,
        30_000,
        '8 timeouts while frozen',
      );
    } finally {
      cluster.thaw();
    }
    await load.until(lastAllOk(40), 30_000, '40 successes in a row after the thaw');
    const outcomes = await load.stop();

    expectOnlySuccessOrSafe5xx(outcomes);
    expect(server.child.exitCode).toBeNull();
  });
});
