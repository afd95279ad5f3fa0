import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { SqliteWriteLock, WriteTurn, type WriteLockPolicy } from '../../src/store/sqlite/transaction.js';

describe('SqliteWriteLock: calls started together each get their own write transaction', () => {
  let dir: string;
  let db: Database.Database;
  let other: Database.Database;

  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'write-lock-'));
    db = new Database(join(dir, 'db.sqlite'));
    db.pragma('journal_mode = WAL');
    db.exec('CREATE TABLE t (v TEXT)');
    other = new Database(join(dir, 'db.sqlite'));
    other.pragma('busy_timeout = 0');
  });
  afterEach(() => {
    other.close();
    db.close();
    rmSync(dir, { recursive: true, force: true });
  });

  /** Whether this connection holds the write lock: another connection cannot take it without waiting. */
  const holdsWriteLock = (): boolean => {
    try {
      other.exec('BEGIN IMMEDIATE');
      other.exec('ROLLBACK');
      return false;
    } catch {
      return true;
    }
  };

  const policies: [string, WriteLockPolicy][] = [
    ['the server (busy timeout)', { busyTimeoutMs: 1000 }],
    ['a command (waits its turn)', { busyTimeoutMs: 1000, onLongWait: () => undefined }],
  ];

  it.each(policies)('%s: each work runs holding the lock, none inside another call’s transaction', async (_, policy) => {
    const lock = new SqliteWriteLock(db, policy);
    expect(await Promise.all([lock.run(holdsWriteLock), lock.run(holdsWriteLock), lock.run(holdsWriteLock)])).toEqual([true, true, true]);
    expect(db.inTransaction).toBe(false);
  });

  it.each(policies)('%s: a work that fails rolls back only its own writes', async (_, policy) => {
    const lock = new SqliteWriteLock(db, policy);
    const failing = lock.run(() => {
      db.prepare("INSERT INTO t VALUES ('lost')").run();
      throw new Error('refused');
    });
    const kept = lock.run(() => db.prepare("INSERT INTO t VALUES ('kept')").run());
    await expect(failing).rejects.toThrow('refused');
    await kept;
    expect(db.prepare('SELECT v FROM t').pluck().all()).toEqual(['kept']);
  });
});

describe('SqliteWriteLock: a transaction held across awaits on a second connection of the process', () => {
  let dir: string;
  let main: Database.Database;
  let importer: Database.Database;
  let mainLock: SqliteWriteLock;
  let importLock: SqliteWriteLock;

  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'write-turn-'));
    main = new Database(join(dir, 'db.sqlite'));
    main.pragma('journal_mode = WAL');
    main.exec('CREATE TABLE t (v TEXT)');
    importer = new Database(join(dir, 'db.sqlite'));
    const turn = new WriteTurn();
    // The server's policy: SQLite's busy handler would sleep on the thread for up to 2 s.
    mainLock = new SqliteWriteLock(main, { busyTimeoutMs: 2000 }, turn);
    importLock = new SqliteWriteLock(importer, { busyTimeoutMs: 2000 }, turn);
  });
  afterEach(() => {
    importer.close();
    main.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('makes the process’s other writers wait for it without blocking the thread, then run after its commit', async () => {
    let finishImport!: () => void;
    const importDone = importLock.runHoldingTurn(async () => {
      importer.prepare("INSERT INTO t VALUES ('imported')").run();
      await new Promise<void>((resolve) => (finishImport = resolve));
    });
    await new Promise((resolve) => setImmediate(resolve));

    const started = performance.now();
    const write = mainLock.run(() => main.prepare("INSERT INTO t VALUES ('request')").run());
    expect(mainLock.runIfFree(() => main.prepare("INSERT INTO t VALUES ('if free')").run())).toBe(false);
    // The thread is free while the write waits: a timer set now fires on time.
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(performance.now() - started).toBeLessThan(1000);

    finishImport();
    await importDone;
    await write;
    expect(main.prepare('SELECT v FROM t ORDER BY rowid').pluck().all()).toEqual(['imported', 'request']);
    expect(mainLock.runIfFree(() => main.prepare("INSERT INTO t VALUES ('if free')").run())).toBe(true);
  });

  it('rolls back what it wrote when its work fails, and frees the turn', async () => {
    await expect(
      importLock.runHoldingTurn(async () => {
        importer.prepare("INSERT INTO t VALUES ('lost')").run();
        await new Promise((resolve) => setImmediate(resolve));
        throw new Error('bad record');
      }),
    ).rejects.toThrow('bad record');
    await mainLock.run(() => main.prepare("INSERT INTO t VALUES ('after')").run());
    expect(main.prepare('SELECT v FROM t').pluck().all()).toEqual(['after']);
  });
});
