import { resolve } from 'node:path';

/** The database DATABASE_URL names (parseDatabaseUrl). */
export type DatabaseTarget = { kind: 'sqlite'; path: string } | { kind: 'postgres'; url: string };

export const DEFAULT_SQLITE_PATH = './data/contacts.db';

/** PostgreSQL connections per process, and statements that may wait for one (DB_POOL_SIZE, DB_QUEUE_LIMIT). */
export const DEFAULT_POOL = { size: 3, queueLimit: 64 } as const;

/**
 * Reads DATABASE_URL: unset or empty → SQLite at ./data/contacts.db; `file:PATH` → SQLite at PATH;
 * `postgres://` or `postgresql://` → PostgreSQL. Anything else is refused.
 */
export function parseDatabaseUrl(url: string | undefined): DatabaseTarget {
  if (url === undefined || url.trim() === '') return { kind: 'sqlite', path: resolve(DEFAULT_SQLITE_PATH) };
  if (url.startsWith('file:')) {
    const path = url.slice('file:'.length).replace(/^\/\/(?=\/)/, '');
    if (path === '') throw new Error('DATABASE_URL "file:" needs a path, e.g. file:./data/contacts.db');
    return { kind: 'sqlite', path: path === ':memory:' ? path : resolve(path) };
  }
  if (/^postgres(ql)?:\/\//.test(url)) return { kind: 'postgres', url };
  throw new Error('DATABASE_URL must be file:PATH, postgres://… or postgresql://…');
}
