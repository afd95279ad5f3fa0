import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { SqliteWriteLock, type WriteLockPolicy } from '../../src/store/sqlite/transaction.js';

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
