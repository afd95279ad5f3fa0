import { mkdirSync, statSync } from 'node:fs';
import { dirname } from 'node:path';
import Database from 'better-sqlite3';
import type { StoreOptions } from '../contracts/store-options.js';
import { SqliteWriteLock, type WriteTurn } from './transaction.js';

const openedDatabases = new Set<Database.Database>();

/** Keeps `db` from being garbage collected, ever: see StatementCache. */
export function keptForLife(db: Database.Database): Database.Database {
  openedDatabases.add(db);
  return db;
}

/** The file a connection opened, as the file system names it: a file moved, deleted or replaced has another. */
interface FileIdentity {
  dev: number;
  ino: number;
}

/**
 * Opens the SQLite database at `path`, in WAL mode, with the lock its writes take. It creates the file and its
 * folder unless `options.mustExist`: then a missing file is an error, never a new empty database.
 */
export function openDatabase(
  path: string,
  options: StoreOptions,
  turn?: WriteTurn,
): { db: Database.Database; writeLock: SqliteWriteLock; detachedReason: () => string | null } {
  const inMemory = path === ':memory:';
  if (!inMemory && options.mustExist !== true) mkdirSync(dirname(path), { recursive: true });
  const db = openFile(path, options.mustExist === true && !inMemory);
  db.exec('PRAGMA journal_mode = WAL; PRAGMA synchronous = NORMAL; PRAGMA foreign_keys = ON');
  const { onLongLockWait } = options;
  const writeLock = new SqliteWriteLock(
    db,
    {
      busyTimeoutMs: options.statementTimeoutMs ?? 5000,
      onLongWait: onLongLockWait && (() => onLongLockWait(longWaitNotice(path))),
    },
    turn,
  );
  const opened = inMemory ? null : identityOf(path);
  return { db, writeLock, detachedReason: () => (opened === null ? null : detachedReason(path, opened)) };
}

function openFile(path: string, mustExist: boolean): Database.Database {
  try {
    return keptForLife(new Database(path, { fileMustExist: mustExist }));
  } catch (error) {
    if (mustExist && identityOf(path) === null) {
      throw new Error(`No database at ${path}: create it with \`contacts-read-api migrate\` (or \`demo\`), or set DATABASE_URL`, {
        cause: error,
      });
    }
    throw error;
  }
}

/** The file at `path`, or null when there is none this process can see (missing, a folder on the way gone or unreadable). */
function identityOf(path: string): FileIdentity | null {
  try {
    const stat = statSync(path);
    return { dev: stat.dev, ino: stat.ino };
  } catch {
    return null;
  }
}

/** Why `path` no longer names the file opened as `opened`, or null while it does. */
function detachedReason(path: string, opened: FileIdentity): string | null {
  const now = identityOf(path);
  if (now === null) return `the database file ${path} is gone (deleted, or its folder moved)`;
  return now.dev === opened.dev && now.ino === opened.ino ? null : `the database file ${path} was replaced by another file`;
}

function longWaitNotice(path: string): string {
  return `waiting for the database: another process is writing (${path}); this command goes on once it is done (Ctrl-C gives up)`;
}
