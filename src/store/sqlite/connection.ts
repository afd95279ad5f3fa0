import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import Database from 'better-sqlite3';
import type { StoreOptions } from '../store.js';
import { SqliteWriteLock } from './transaction.js';

const openedDatabases = new Set<Database.Database>();

/** Keeps `db` from being garbage collected, ever: see StatementCache. */
export function keptForLife(db: Database.Database): Database.Database {
  openedDatabases.add(db);
  return db;
}

/** Opens (creating if needed) the SQLite database at `path`, in WAL mode, with the lock its writes take. */
export function openDatabase(path: string, options: StoreOptions): { db: Database.Database; writeLock: SqliteWriteLock } {
  if (path !== ':memory:') mkdirSync(dirname(path), { recursive: true });
  const db = keptForLife(new Database(path));
  db.exec('PRAGMA journal_mode = WAL; PRAGMA synchronous = NORMAL; PRAGMA foreign_keys = ON');
  const { onLongLockWait } = options;
  const writeLock = new SqliteWriteLock(db, {
    busyTimeoutMs: options.statementTimeoutMs ?? 5000,
    onLongWait: onLongLockWait && (() => onLongLockWait(longWaitNotice(path))),
  });
  return { db, writeLock };
}

function longWaitNotice(path: string): string {
  return `waiting for the database: another process is writing (${path}); this command goes on once it is done (Ctrl-C gives up)`;
}
