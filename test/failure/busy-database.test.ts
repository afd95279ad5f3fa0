import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { setTimeout as sleep } from 'node:timers/promises';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, inject, it, vi } from 'vitest';
import { parseDatabaseUrl } from '../../src/domain/database-url.js';
import type { Store } from '../../src/store/store.js';
import { bearer } from '../support/app.js';
import { createTestDatabase, type TestDatabase } from '../support/backends.js';
import { BIN } from '../support/cli.js';
import { createKey, createUser, importNumberedContacts } from '../support/seed.js';
import { startServerProcess, type ServerProcess } from '../support/server-process.js';
import { holdSqliteWriteLock } from '../support/sqlite-lock-holder.js';

/** The server's wait for a lock (SQLite busy_timeout, PostgreSQL statement_timeout) in these tests. */
const SERVER_LOCK_WAIT_MS = 5_000;
/** Half of it: a request answered within this did not sit out the server's lock wait. */
const WELL_UNDER_LOCK_WAIT_MS = SERVER_LOCK_WAIT_MS / 2;
const NOTICE = 'waiting for the database: another process is writing';

async function timedGet(url: string, headers: Record<string, string> = {}): Promise<{ status: number; ms: number; body: string }> {
  const started = performance.now();
  const response = await fetch(url, { headers });
  const body = await response.text();
  return { status: response.status, ms: performance.now() - started, body };
}

/** Runs the built CLI as its own process, its stderr readable while it runs. */
function startBin(env: NodeJS.ProcessEnv, ...args: string[]) {
  const child = spawn(process.execPath, [BIN, ...args], {
    env: { ...process.env, API_KEY_PREFIX: 'cnt', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => void (stdout += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => void (stderr += chunk.toString()));
  const exited = once(child, 'close').then(([code]) => code as number | null);
  return { stdout: () => stdout, stderr: () => stderr, exited, running: () => child.exitCode === null };
}

async function lastUsedAt(store: Store, ownerId: string, keyId: string): Promise<string | null> {
  const keys = await store.keys.listForOwner(ownerId);
  return keys.find((key) => key.id === keyId)!.last_used_at;
}

/** Waits for the key's use to be recorded, as the time of use (within the request's window), not of a later write. */
async function expectUseRecorded(store: Store, ownerId: string, keyId: string, from: number, to: number): Promise<void> {
  const recorded = await vi.waitFor(
    async () => {
      const value = await lastUsedAt(store, ownerId, keyId);
      expect(value).not.toBeNull();
      return value!;
    },
    { timeout: 10_000, interval: 25 },
  );
  expect(Date.parse(recorded)).toBeGreaterThanOrEqual(from);
  expect(Date.parse(recorded)).toBeLessThanOrEqual(to);
}

/** A user with two contacts, the first to be merged into the second. */
async function userWithTwoContacts(store: Store) {
  const user = await createUser(store);
  await importNumberedContacts(store, user.id, 2, 'Merge');
  const [duplicate, survivor] = (await store.contacts.listPage(user.id, { limit: 10, offset: 0 })).contacts;
  return { user, duplicateId: duplicate!.id, survivorId: survivor!.id };
}

describe('SQLite: another process holds the write lock', () => {
  let database: TestDatabase;
  let dispose: () => Promise<void>;
  let server: ServerProcess;
  let path: string;
  const env = () => ({ DATABASE_URL: database.databaseUrl, DB_STATEMENT_TIMEOUT_MS: String(SERVER_LOCK_WAIT_MS) });

  beforeAll(async () => {
    ({ database, dispose } = await createTestDatabase('sqlite'));
    path = (parseDatabaseUrl(database.databaseUrl) as { path: string }).path;
    server = await startServerProcess(env());
  });

  afterAll(async () => {
    await server?.kill();
    await dispose?.();
  });

  it('answers a never-used key and /healthz at once, and records the use once the lock is released', async () => {
    const user = await createUser(database.store);
    const { id: keyId, key } = await createKey(database.store, user.id);
    const lock = await holdSqliteWriteLock(path);
    let requested: number;
    let answered: number;
    try {
      requested = Date.now();
      const [list, health] = await Promise.all([
        timedGet(`${server.url}/api/v1/contacts?limit=5`, bearer(key)),
        timedGet(`${server.url}/healthz`),
      ]);
      answered = Date.now();
      expect(list.status).toBe(200);
      expect(health.status).toBe(200);
      expect(list.ms).toBeLessThan(WELL_UNDER_LOCK_WAIT_MS);
      expect(health.ms).toBeLessThan(WELL_UNDER_LOCK_WAIT_MS);
      expect(await lastUsedAt(database.store, user.id, keyId)).toBeNull();
    } finally {
      await lock.release();
    }
    await expectUseRecorded(database.store, user.id, keyId, requested, answered);
  });

  it('contacts merge waits for the writer, says so once on stderr, and succeeds after it; the server reads meanwhile', async () => {
    const { user, duplicateId, survivorId } = await userWithTwoContacts(database.store);
    const { key } = await createKey(database.store, user.id);
    const lock = await holdSqliteWriteLock(path);
    let merge: ReturnType<typeof startBin>;
    try {
      merge = startBin(env(), 'contacts', 'merge', '--user', user.id, duplicateId, '--into', survivorId);
      await vi.waitFor(async () => expect(merge.stderr()).toContain(NOTICE), { timeout: 15_000, interval: 25 });
      expect(merge.running()).toBe(true);

      const list = await timedGet(`${server.url}/api/v1/contacts?limit=5`, bearer(key));
      expect(list.status).toBe(200);
      expect(list.ms).toBeLessThan(WELL_UNDER_LOCK_WAIT_MS);
      expect(JSON.parse(list.body).pagination.total).toBe(2);
      expect(merge.running()).toBe(true);
    } finally {
      await lock.release();
    }
    expect(await merge.exited).toBe(0);
    expect(merge.stdout()).toContain(`Merged ${duplicateId} into ${survivorId}`);
    expect(merge.stderr().split(NOTICE)).toHaveLength(2);
    expect(merge.stderr()).toContain(path);
    const after = await database.store.contacts.listPage(user.id, { limit: 10, offset: 0 });
    expect(after.contacts.map((contact) => contact.id)).toEqual([survivorId]);
  });

  it('serve starts while another process writes: migrations already applied need no write lock', async () => {
    const lock = await holdSqliteWriteLock(path);
    let second: ServerProcess | undefined;
    try {
      second = await startServerProcess(env());
      expect((await timedGet(`${second.url}/healthz`)).status).toBe(200);
    } finally {
      await second?.kill();
      await lock.release();
    }
  });
});

const postgresAdminUrl = inject('postgresAdminUrl');

describe.runIf(postgresAdminUrl !== null)('PostgreSQL: another session holds the rows', () => {
  /** Short, so that a touch which queued behind the row lock would be cancelled while the row is still held. */
  const STATEMENT_TIMEOUT_MS = 1_000;
  let database: TestDatabase;
  let dispose: () => Promise<void>;
  let server: ServerProcess;
  let locker: pg.Client;
  /** Outside any transaction: pg_stat_activity is read once per transaction, so the locker would see it frozen. */
  let observer: pg.Client;

  beforeAll(async () => {
    ({ database, dispose } = await createTestDatabase('postgres'));
    server = await startServerProcess({ DATABASE_URL: database.databaseUrl, DB_STATEMENT_TIMEOUT_MS: String(STATEMENT_TIMEOUT_MS) });
    locker = new pg.Client({ connectionString: database.databaseUrl });
    observer = new pg.Client({ connectionString: database.databaseUrl });
    await Promise.all([locker.connect(), observer.connect()]);
  });

  afterAll(async () => {
    await locker?.end();
    await observer?.end();
    await server?.kill();
    await dispose?.();
  });

  /** Sessions of the test database waiting for a lock right now. */
  async function sessionsWaitingForALock(): Promise<number> {
    const { rows } = await observer.query<{ waiting: number }>(
      `SELECT count(*)::int AS waiting FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'`,
    );
    return rows[0]!.waiting;
  }

  it('a touch never queues behind a locked api_keys row, and the use is recorded once the row is free', async () => {
    const user = await createUser(database.store);
    const { id: keyId, key } = await createKey(database.store, user.id);
    await locker.query('BEGIN');
    let requested: number;
    let answered: number;
    try {
      await locker.query('SELECT 1 FROM api_keys WHERE id = $1 FOR UPDATE', [keyId]);
      requested = Date.now();
      const list = await timedGet(`${server.url}/api/v1/contacts?limit=5`, bearer(key));
      answered = Date.now();
      expect(list.status).toBe(200);
      expect(list.ms).toBeLessThan(WELL_UNDER_LOCK_WAIT_MS);
      // Held past the server's statement timeout: a touch waiting for the row would be cancelled, and lost.
      for (let sample = 0; sample < 15; sample += 1) {
        expect(await sessionsWaitingForALock()).toBe(0);
        await sleep(STATEMENT_TIMEOUT_MS / 10);
      }
      expect(await lastUsedAt(database.store, user.id, keyId)).toBeNull();
    } finally {
      await locker.query('COMMIT');
    }
    await expectUseRecorded(database.store, user.id, keyId, requested, answered);
  });

  it('contacts merge waits for an import of the same owner without a statement timeout, and succeeds after it', async () => {
    const { user, duplicateId, survivorId } = await userWithTwoContacts(database.store);
    // What an import holds until it commits: the owner's listing row (see lockOwnerListing).
    await locker.query('BEGIN');
    let merge: ReturnType<typeof startBin>;
    try {
      await locker.query('SELECT 1 FROM owner_listing WHERE owner_id = $1 FOR NO KEY UPDATE', [user.id]);
      merge = startBin(
        { DATABASE_URL: database.databaseUrl, DB_STATEMENT_TIMEOUT_MS: String(STATEMENT_TIMEOUT_MS) },
        'contacts',
        'merge',
        '--user',
        user.id,
        duplicateId,
        '--into',
        survivorId,
      );
      await vi.waitFor(async () => expect(await sessionsWaitingForALock()).toBe(1), { timeout: 15_000, interval: 25 });
      // Past the server's statement timeout, which the command does not take on.
      await sleep(STATEMENT_TIMEOUT_MS * 1.5);
      expect(merge.running()).toBe(true);
    } finally {
      await locker.query('COMMIT');
    }
    expect(await merge.exited).toBe(0);
    expect(merge.stdout()).toContain(`Merged ${duplicateId} into ${survivorId}`);
    const after = await database.store.contacts.listPage(user.id, { limit: 10, offset: 0 });
    expect(after.contacts.map((contact) => contact.id)).toEqual([survivorId]);
  });
});
