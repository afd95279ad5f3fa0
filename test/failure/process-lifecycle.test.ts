import { execFile, spawn } from 'node:child_process';
import { once } from 'node:events';
import { existsSync, mkdirSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { connect, createServer, type Server } from 'node:net';
import { dirname, resolve } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, afterEach, beforeAll, describe, expect, inject, it, vi } from 'vitest';
import { ECHO_WINDOW_MS } from '../../src/shutdown-signals.js';
import { openStore } from '../../src/store/open-store.js';
import { parseDatabaseUrl } from '../../src/domain/database-url.js';
import { bearer } from '../support/app.js';
import { createTestDatabase, type TestDatabase } from '../support/backends.js';
import { BIN } from '../support/cli.js';
import { freePort } from '../support/listen.js';
import { skipClusterTests, startCluster as startPostgresCluster, type TestCluster } from '../support/pg-cluster.js';
import { killAll, processTree, stillRunningAfter } from '../support/process-tree.js';
import { fetchContacts } from '../support/requests.js';
import { createKey, createUser, importNumberedContacts } from '../support/seed.js';
import { startServerProcess, type ServerProcess } from '../support/server-process.js';

/** The bound issue 10 sets: SIGTERM stops every process within SHUTDOWN_TIMEOUT_MS + 2 s, whatever stdout does. */
const STOP_BOUND_SLACK_MS = 2_000;
const DROP_WARNING = 'log lines dropped while stdout was not read';

/** Waits until the server has printed `count` "listening" lines: one per worker started. */
async function listeningLines(server: ServerProcess, count: number, withinMs = 20_000): Promise<void> {
  await vi.waitFor(async () => expect((server.output().match(/listening on/g) ?? []).length).toBeGreaterThanOrEqual(count), {
    timeout: withinMs,
    interval: 25,
  });
}

/** A request the server has begun and cannot finish: complete headers with a valid key, then half the body. */
async function openStalledRequest(url: string, key: string): Promise<() => void> {
  const { hostname, port } = new URL(url);
  const socket = connect(Number(port), hostname);
  await once(socket, 'connect');
  socket.write(
    `POST /mcp HTTP/1.1\r\nHost: ${hostname}\r\nAuthorization: Bearer ${key}\r\nContent-Type: application/json\r\n` +
      `Accept: application/json, text/event-stream\r\nContent-Length: 1000\r\n\r\n{"jsonrpc":`,
  );
  socket.on('error', () => undefined);
  return () => socket.destroy();
}

describe('serve with workers: stopping, whatever stdout and the workers do', () => {
  let database: TestDatabase;
  let dispose: () => Promise<void>;
  let key: string;
  const started: number[][] = [];

  beforeAll(async () => {
    ({ database, dispose } = await createTestDatabase('sqlite'));
    const user = await createUser(database.store);
    await importNumberedContacts(database.store, user.id, 30, 'Lifecycle');
    key = (await createKey(database.store, user.id)).key;
  });
  afterEach(() => {
    for (const pids of started.splice(0)) killAll(pids);
  });
  afterAll(async () => {
    await dispose?.();
  });

  // A fixed port: with every worker gone, the primary lets go of port 0's pick, and new workers would get another.
  const startWorkers = async (env: NodeJS.ProcessEnv) => {
    const server = await startServerProcess(
      { DATABASE_URL: database.databaseUrl, WORKERS: '2', RATE_LIMIT_PER_MINUTE: '0', ...env },
      await freePort(),
    );
    await listeningLines(server, 2);
    const pids = processTree(server.child.pid!);
    started.push(pids);
    expect(pids).toHaveLength(3);
    return { server, pids };
  };

  it('stops all three processes within SHUTDOWN_TIMEOUT_MS + 2 s when its log reader stalled, then went away', async () => {
    const shutdownTimeoutMs = 3_000;
    const { stdout } = await promisify(execFile)(
      process.execPath,
      [resolve('test/failure/fixtures/stalled-log-reader.mjs'), BIN, database.databaseUrl],
      { env: { ...process.env, SHUTDOWN_TIMEOUT_MS: String(shutdownTimeoutMs) } },
    );
    const report = JSON.parse(stdout) as { primary: number; workers: number[]; answered: number; after: number };
    const pids = [report.primary, ...report.workers];
    started.push(pids);
    expect(report.workers).toHaveLength(2);
    // The service kept answering while nobody read its log: the load, then all 50 requests after it.
    expect(report.answered).toBeGreaterThan(1000);
    expect(report.after).toBe(50);
    expect(await stillRunningAfter(pids, shutdownTimeoutMs + STOP_BOUND_SLACK_MS)).toEqual([]);
  });

  it('drops and counts log lines while the reader stalls, keeps memory bounded, and says how many once it reads again', async () => {
    const { server, pids } = await startWorkers({ LOG_LEVEL: 'info', METRICS_TOKEN: 'metrics-token-0123456789' });
    server.child.stdout!.pause();
    const dropped = async () => {
      const text = await (await fetch(`${server.url}/metrics`, { headers: { authorization: 'Bearer metrics-token-0123456789' } })).text();
      return Number(/^contacts_api_log_lines_dropped_total (\d+)/m.exec(text)?.[1] ?? NaN);
    };
    const deadline = Date.now() + 30_000;
    let answered = 0;
    while ((await dropped()) < 1000 && Date.now() < deadline) {
      const responses = await Promise.all(Array.from({ length: 64 }, () => fetchContacts(server.url, key, 'limit=1')));
      answered += responses.filter((response) => response.status === 200).length;
      await Promise.all(responses.map((response) => response.arrayBuffer()));
    }
    const droppedWhileStalled = await dropped();
    expect(droppedWhileStalled).toBeGreaterThanOrEqual(1000);
    expect(answered).toBeGreaterThan(0);
    // What a stalled reader may cost each worker: LOG_BUFFER_BYTES (1 MiB) of lines, not a heap that grows with the load.
    for (const pid of pids.slice(1)) {
      const rssKb = Number((await promisify(execFile)('ps', ['-o', 'rss=', '-p', String(pid)])).stdout.trim());
      expect(rssKb).toBeLessThan(200 * 1024);
    }

    server.child.stdout!.resume();
    await fetchContacts(server.url, key, 'limit=1');
    const warnings = await vi.waitFor(
      async () => {
        const found = server.logLines().filter((line) => line.msg === DROP_WARNING);
        expect(found.length).toBeGreaterThan(0);
        return found;
      },
      { timeout: 10_000, interval: 25 },
    );
    const reported = warnings.reduce((sum, line) => sum + (line.dropped as number), 0);
    expect(reported).toBeGreaterThan(0);
    expect(reported).toBeLessThanOrEqual(droppedWhileStalled + 200);
    // One warning per worker that dropped lines, not one per dropped line.
    expect(warnings.length).toBeLessThanOrEqual(2);
    // Two workers write to one pipe: each write is whole lines, so no line is ever cut into by another's.
    const written = server.stdout().split('\n').slice(0, -1);
    expect(written.length).toBeGreaterThan(1000);
    for (const line of written) expect(() => JSON.parse(line), line).not.toThrow();
  });

  it('keeps serving, and stops cleanly, after its log reader went away (a broken pipe stops logging and nothing else)', async () => {
    const { server, pids } = await startWorkers({ LOG_LEVEL: 'info' });
    server.child.stdout!.destroy();
    for (let i = 0; i < 200; i += 1) {
      const response = await fetchContacts(server.url, key, 'limit=1', { connection: 'close' });
      expect(response.status).toBe(200);
      await response.arrayBuffer();
    }
    server.child.kill('SIGTERM');
    expect(await server.exited).toBe(0);
    expect(await stillRunningAfter(pids, STOP_BOUND_SLACK_MS)).toEqual([]);
  });

  it('kills a worker that overruns SHUTDOWN_TIMEOUT_MS, without relying on the worker’s own timer', async () => {
    const shutdownTimeoutMs = 1_000;
    const { server, pids } = await startWorkers({ SHUTDOWN_TIMEOUT_MS: String(shutdownTimeoutMs), LOG_LEVEL: 'warn' });
    // A stopped process runs no timer at all, like a worker whose event loop is stuck.
    process.kill(pids[1]!, 'SIGSTOP');
    server.child.kill('SIGTERM');
    expect(await stillRunningAfter(pids, shutdownTimeoutMs + STOP_BOUND_SLACK_MS)).toEqual([]);
    expect(await server.exited).toBe(1);
    expect(server.logLines().some((line) => line.msg === 'workers overran the shutdown timeout; killing them')).toBe(true);
  });

  it('stops the whole cluster at once on a second signal, instead of orphaning the workers', async () => {
    const { server, pids } = await startWorkers({ SHUTDOWN_TIMEOUT_MS: '60000', REQUEST_TIMEOUT_MS: '60000', LOG_LEVEL: 'warn' });
    const stalled = await Promise.all([openStalledRequest(server.url, key), openStalledRequest(server.url, key)]);
    try {
      server.child.kill('SIGTERM');
      // The workers wait for their in-flight requests; the first signal alone does not stop them. The second comes
      // after the window in which the same signal is taken for the first one arriving another way.
      expect(await stillRunningAfter(pids, ECHO_WINDOW_MS + 500)).toHaveLength(3);
      server.child.kill('SIGTERM');
      expect(await stillRunningAfter(pids, STOP_BOUND_SLACK_MS)).toEqual([]);
      expect(await server.exited).toBe(1);
    } finally {
      for (const close of stalled) close();
    }
  });

  it('exits non-zero within 5 s with one line naming the address when the port is taken', async () => {
    const taken: Server = createServer();
    const port = await freePort();
    await new Promise<void>((resolve) => taken.listen(port, '127.0.0.1', resolve));
    try {
      for (const workers of ['2', '1']) {
        const child = spawn(process.execPath, [BIN, 'serve', '--port', String(port), '--workers', workers], {
          env: { ...process.env, DATABASE_URL: database.databaseUrl, LOG_LEVEL: 'warn' },
          stdio: ['ignore', 'pipe', 'pipe'],
        });
        let stderr = '';
        child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
        const killer = setTimeout(() => child.kill('SIGKILL'), 5_000);
        const [code, signal] = (await once(child, 'close')) as [number | null, NodeJS.Signals | null];
        clearTimeout(killer);
        expect({ workers, code, signal }).toEqual({ workers, code: 1, signal: null });
        const failures = stderr.split('\n').filter((line) => line.includes('cannot listen'));
        expect(failures).toEqual([`error: cannot listen on 127.0.0.1:${port}: the address is already in use`]);
        expect(stderr).not.toMatch(/EADDRINUSE/);
      }
    } finally {
      taken.close();
    }
  });

  it('never serves an empty database when the folder goes away, stops serving the moved file, and comes back with it', async () => {
    const path = database.databaseUrl.slice('file:'.length);
    const folder = dirname(path);
    const away = `${folder}.gone`;
    const { server } = await startWorkers({ LOG_LEVEL: 'info' });
    const readiness = async () => {
      try {
        return (await fetch(`${server.url}/readyz`, { headers: { connection: 'close' } })).status;
      } catch {
        return 'refused';
      }
    };
    expect(await readiness()).toBe(200);
    renameSync(folder, away);
    try {
      // Both workers see that the file left its path, stop, and their replacements cannot open it.
      await vi.waitFor(
        () => {
          const messages = server.logLines().map((line) => line.msg);
          expect(messages.filter((msg) => msg === 'the database file is no longer at its path; stopping to open it again')).toHaveLength(2);
          expect(messages.filter((msg) => msg === 'worker could not start; exiting').length).toBeGreaterThanOrEqual(2);
        },
        { timeout: 20_000, interval: 50 },
      );
      const statuses = [];
      for (let probe = 0; probe < 10; probe += 1) {
        statuses.push(await readiness());
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
      expect(statuses).not.toContain(200);
      expect(existsSync(folder)).toBe(false);
    } finally {
      renameSync(away, folder);
    }
    await vi.waitFor(
      async () => {
        expect(await readiness()).toBe(200);
        const response = await fetchContacts(server.url, key, 'limit=1', { connection: 'close' });
        expect(response.status).toBe(200);
      },
      { timeout: 30_000, interval: 50 },
    );
    // Two new workers, so that none is still starting when the service is stopped.
    await listeningLines(server, 4);
    started.push(processTree(server.child.pid!));
    server.child.kill('SIGTERM');
    expect(await server.exited).toBe(0);
  });

  it('without workers, stops with exit code 1 once its database file leaves its path, creating nothing', async () => {
    const folder = dirname(database.databaseUrl.slice('file:'.length));
    const away = `${folder}.gone`;
    const server = await startServerProcess({ DATABASE_URL: database.databaseUrl, WORKERS: '1', LOG_LEVEL: 'info' });
    started.push(processTree(server.child.pid!));
    renameSync(folder, away);
    try {
      expect(await server.exited).toBe(1);
      expect(server.logLines().map((line) => line.msg)).toContain('the database file is no longer at its path; stopping to open it again');
      expect(existsSync(folder)).toBe(false);
    } finally {
      renameSync(away, folder);
    }
  });

  // Its two waits take up to 50 s between them on a loaded machine (the backoff alone is several seconds): its own bound.
  it('restarts a worker that cannot start with backoff, logs it, and comes back once it can', async () => {
    // The database's folder goes away (an unmounted volume): a new worker cannot open the database, and exits.
    const away = `${dirname(database.databaseUrl.slice('file:'.length))}.away`;
    const folder = dirname(database.databaseUrl.slice('file:'.length));
    const { server, pids } = await startWorkers({ LOG_LEVEL: 'info' });
    renameSync(folder, away);
    writeFileSync(folder, 'not a folder');
    try {
      for (const pid of pids.slice(1)) process.kill(pid, 'SIGKILL');
      const restarts = await vi.waitFor(
        async () => {
          const lines = server.logLines().filter((line) => line.msg === 'worker exited; starting another');
          expect(lines.length).toBeGreaterThanOrEqual(6);
          return lines;
        },
        { timeout: 20_000, interval: 25 },
      );
      expect(server.logLines().some((line) => line.msg === 'worker could not start; exiting')).toBe(true);
      // Each exit soon after a start waits longer than the one before: 250 ms, 500 ms, 1 s …
      const delays = restarts.map((line) => line.restartInMs as number);
      expect(delays[0]).toBeLessThanOrEqual(250);
      expect(delays).toEqual([...delays].sort((a, b) => a - b));
      expect(Math.max(...delays)).toBeGreaterThanOrEqual(2_000);
      // The worker's pid under its own name: a line holds `pid` once, the primary's.
      const raw = server
        .output()
        .split('\n')
        .filter((line) => line.includes('worker exited; starting another'));
      for (const line of raw) expect(line.match(/"pid":/g)).toHaveLength(1);
      expect(restarts.every((line) => typeof line.workerPid === 'number' && line.workerPid !== line.pid)).toBe(true);
    } finally {
      rmSync(folder);
      renameSync(away, folder);
    }
    await vi.waitFor(
      async () => {
        const response = await fetchContacts(server.url, key, 'limit=1', { connection: 'close' });
        expect(response.status).toBe(200);
      },
      { timeout: 30_000, interval: 25 },
    );
    started.push(processTree(server.child.pid!));
    server.child.kill('SIGTERM');
    expect(await server.exited).toBe(0);
  }, 60_000);
});

const postgresAdminUrl = inject('postgresAdminUrl');

describe.runIf(!skipClusterTests('worker recovery tests', postgresAdminUrl))(
  'serve with workers while PostgreSQL stops and returns',
  () => {
    let postgres: TestCluster;
    let key: string;
    let pids: number[] = [];

    beforeAll(async () => {
      postgres = await startPostgresCluster();
      const store = await openStore(parseDatabaseUrl(postgres.url()));
      try {
        await store.migrate();
        const user = await createUser(store);
        key = (await createKey(store, user.id)).key;
        await importNumberedContacts(store, user.id, 10, 'Recovering');
      } finally {
        await store.close();
      }
    });
    afterAll(async () => {
      killAll(pids);
      await postgres?.dispose();
    });

    it('starts replacement workers while the database is down, answers 503 on /readyz, and recovers by itself', async () => {
      const shutdownTimeoutMs = 3_000;
      const server = await startServerProcess(
        {
          DATABASE_URL: postgres.url(),
          WORKERS: '2',
          RATE_LIMIT_PER_MINUTE: '0',
          LOG_LEVEL: 'warn',
          SHUTDOWN_TIMEOUT_MS: String(shutdownTimeoutMs),
        },
        await freePort(),
      );
      await listeningLines(server, 2);
      pids = processTree(server.child.pid!);
      const get = (path: string) =>
        fetch(`${server.url}${path}`, { headers: { ...bearer(key), connection: 'close' }, signal: AbortSignal.timeout(10_000) });

      await postgres.stop('fast');
      for (const pid of pids.slice(1)) process.kill(pid, 'SIGKILL');
      await listeningLines(server, 4);
      pids = processTree(server.child.pid!);
      expect((await get('/readyz')).status).toBe(503);
      expect((await get('/healthz')).status).toBe(200);
      const down = await get('/api/v1/contacts');
      expect(down.status).toBeGreaterThanOrEqual(500);
      expect(Object.keys((await down.json()) as object)).toEqual(['error']);

      await postgres.start();
      await vi.waitFor(async () => expect((await get('/readyz')).status).toBe(200), { timeout: 20_000, interval: 25 });
      const listing = await get('/api/v1/contacts');
      expect(listing.status).toBe(200);
      expect(((await listing.json()) as { pagination: { total: number } }).pagination.total).toBe(10);

      // And SIGTERM still stops everything with the database gone again.
      await postgres.stop('immediate');
      server.child.kill('SIGTERM');
      expect(await stillRunningAfter(pids, shutdownTimeoutMs + STOP_BOUND_SLACK_MS)).toEqual([]);
      await postgres.start();
    });
  },
);

describe('npm start', () => {
  it('stops the server and its workers when a supervisor stops npm with SIGTERM', async () => {
    const folder = resolve(`${process.env.TMPDIR ?? '/tmp'}/contacts-npm-start-${process.pid}`);
    mkdirSync(folder, { recursive: true });
    const child = spawn('npm', ['start'], {
      env: { ...process.env, DATABASE_URL: `file:${folder}/contacts.db`, PORT: String(await freePort()), WORKERS: '2', LOG_LEVEL: 'warn' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
    let pids: number[] = [];
    try {
      await vi.waitFor(async () => expect((output.match(/listening on/g) ?? []).length).toBe(2), { timeout: 60_000, interval: 25 });
      pids = processTree(child.pid!);
      // npm, the primary and two workers (npm may keep a shell in between; `exec` in the script replaces it).
      expect(pids.length).toBeGreaterThanOrEqual(4);
      child.kill('SIGTERM');
      expect(await stillRunningAfter(pids, 10_000 + STOP_BOUND_SLACK_MS)).toEqual([]);
    } finally {
      killAll(pids);
      rmSync(folder, { recursive: true, force: true });
    }
  });
});
