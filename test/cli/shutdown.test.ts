import { connect } from 'node:net';
import pg from 'pg';
import { afterAll, afterEach, beforeAll, describe, expect, inject, it, vi } from 'vitest';
import { bearer } from '../support/app.js';
import { createTestDatabase, type TestDatabase } from '../support/backends.js';
import { createKey, createUser, importNumberedContacts } from '../support/seed.js';
import { ECHO_WINDOW_MS } from '../../src/shutdown-signals.js';
import { startServerProcess, startWithNpmStart, type ServerProcess } from '../support/server-process.js';

const postgresAdminUrl = inject('postgresAdminUrl');

/** Whether a new TCP connection to the server's port is accepted. */
function acceptsConnections(url: string): Promise<boolean> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve) => {
    const socket = connect(Number(port), hostname);
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}

/**
 * A list request is made slow for real: another session holds an exclusive lock on the tables it reads
 * (the key's and the contacts'), so its query waits inside PostgreSQL until the test commits. (SQLite readers never wait on a
 * lock in WAL mode, so this runs on PostgreSQL only.)
 */
describe.runIf(postgresAdminUrl !== null)('contacts-api serve on SIGTERM or Ctrl-C, with a request in flight', () => {
  let database: TestDatabase;
  let dispose: () => Promise<void>;
  let key: string;
  let locker: pg.Client;
  let server: ServerProcess | undefined;

  const databaseName = () => new URL(database.databaseUrl).pathname.slice(1);
  const lockContacts = async () => {
    locker = new pg.Client({ connectionString: database.databaseUrl });
    await locker.connect();
    await locker.query('BEGIN');
    await locker.query('LOCK TABLE api_keys, contacts IN ACCESS EXCLUSIVE MODE');
  };
  // Asked from its own session: inside the locking transaction, pg_stat_activity would stay a cached snapshot.
  const waitingOnLock = async () => {
    const observer = new pg.Client({ connectionString: database.databaseUrl });
    await observer.connect();
    try {
      const { rows } = await observer.query<{ waiting: string }>(
        "SELECT count(*) AS waiting FROM pg_stat_activity WHERE datname = $1 AND wait_event_type = 'Lock'",
        [databaseName()],
      );
      expect(Number(rows[0]!.waiting)).toBe(1);
    } finally {
      await observer.end();
    }
  };
  const serverEnv = (shutdownTimeoutMs: number) => ({
    DATABASE_URL: database.databaseUrl,
    SHUTDOWN_TIMEOUT_MS: String(shutdownTimeoutMs),
    // The lock wait must not be cut short by the statement or request timeout.
    DB_STATEMENT_TIMEOUT_MS: '120000',
    REQUEST_TIMEOUT_MS: '120000',
    LOG_LEVEL: 'info',
  });
  const start = (shutdownTimeoutMs: number) => startServerProcess(serverEnv(shutdownTimeoutMs));
  /** Starts the server under `npm start` with `workers` and a request that waits on the lock; resolves to its response. */
  const startWithRequestInFlight = async (workers: number) => {
    const started = await startWithNpmStart({ ...serverEnv(60_000), WORKERS: String(workers) });
    server = started;
    // Every worker listens before the Ctrl-C, as when a user presses it.
    await vi.waitFor(() => expect(started.output().match(/listening on/g)).toHaveLength(workers), { timeout: 20_000, interval: 25 });
    await lockContacts();
    const inflight = fetch(`${started.url}/api/v1/contacts?limit=10`, { headers: bearer(key) }).catch((error: Error) => error);
    await vi.waitFor(waitingOnLock, { timeout: 10_000, interval: 25 });
    return { started, inflight };
  };

  beforeAll(async () => {
    ({ database, dispose } = await createTestDatabase('postgres', postgresAdminUrl));
    const owner = await createUser(database.store);
    await importNumberedContacts(database.store, owner.id, 3, 'Draining');
    key = (await createKey(database.store, owner.id)).key;
  });
  afterEach(async () => {
    await server?.kill();
    await locker?.end().catch(() => undefined);
  });
  afterAll(async () => {
    await dispose?.();
  });

  it('finishes the in-flight request with 200, refuses new connections meanwhile, and exits 0', async () => {
    server = await start(60_000);
    await lockContacts();
    const inflight = fetch(`${server.url}/api/v1/contacts?limit=10`, { headers: bearer(key) });
    await vi.waitFor(waitingOnLock, { timeout: 10_000, interval: 25 });

    server.child.kill('SIGTERM');
    await vi.waitFor(async () => expect(await acceptsConnections(server!.url)).toBe(false), { timeout: 10_000, interval: 25 });
    expect(server.child.exitCode).toBeNull();

    await locker.query('COMMIT');
    const response = await inflight;
    expect(response.status).toBe(200);
    expect(((await response.json()) as { pagination: { total: number } }).pagination.total).toBe(3);
    expect(await server.exited).toBe(0);
    expect(server.logLines().map((line) => line.msg)).toContain('shutting down');
  });

  it.each([1, 2])('drains the in-flight request and exits 0 after one Ctrl-C under npm start (%i worker(s))', async (workers) => {
    const { started, inflight } = await startWithRequestInFlight(workers);
    started.ctrlC();
    // npm forwards the Ctrl-C it got to the server, which the terminal signalled already. When both arrive before the
    // server takes the first, the kernel delivers one: deliver npm's once more, as it comes when npm is a little late.
    const shuttingDown = await vi.waitFor(
      () => {
        const line = started.logLines().find((entry) => String(entry.msg).startsWith('shutting down'));
        expect(line).toBeDefined();
        return line!;
      },
      { timeout: 10_000, interval: 25 },
    );
    process.kill(shuttingDown.pid as number, 'SIGINT');
    await vi.waitFor(async () => expect(await acceptsConnections(started.url)).toBe(false), { timeout: 10_000, interval: 25 });

    await locker.query('COMMIT');
    const response = await inflight;
    expect(response).toBeInstanceOf(Response);
    expect((response as Response).status).toBe(200);
    expect(await started.exited).toBe(0);
    expect(started.output()).not.toMatch(/second signal/);
  });

  it.each([1, 2])('stops at once on a second Ctrl-C pressed later under npm start (%i worker(s))', async (workers) => {
    const { started, inflight } = await startWithRequestInFlight(workers);
    started.ctrlC();
    await vi.waitFor(() => expect(started.output()).toMatch(/"msg":"shutting down/), { timeout: 10_000, interval: 25 });
    // Past the window in which the same signal is taken for the first one arriving another way.
    await new Promise((resolve) => setTimeout(resolve, ECHO_WINDOW_MS + 200));
    started.ctrlC();

    expect(await started.exited).not.toBe(0);
    expect(started.output()).toMatch(/second signal during shutdown/);
    expect(await inflight).toBeInstanceOf(Error);
  });

  it('exits 1 once SHUTDOWN_TIMEOUT_MS has passed with the request still running', async () => {
    server = await start(300);
    await lockContacts();
    const inflight = fetch(`${server.url}/api/v1/contacts?limit=10`, { headers: bearer(key) }).catch((error: Error) => error);
    await vi.waitFor(waitingOnLock, { timeout: 10_000, interval: 25 });

    server.child.kill('SIGTERM');
    expect(await server.exited).toBe(1);
    expect(server.logLines().map((line) => line.msg)).toContain('shutdown timed out; exiting before in-flight requests finished');
    expect(await inflight).toBeInstanceOf(Error);
  });
});
