import { resolve } from 'node:path';

/** The database DATABASE_URL names (parseDatabaseUrl). */
export type DatabaseTarget = { kind: 'sqlite'; path: string } | { kind: 'postgres'; url: string };

export const DEFAULT_SQLITE_PATH = './data/contacts.db';

/** PostgreSQL connections per process, and statements that may wait for one (DB_POOL_SIZE, DB_QUEUE_LIMIT). */
export const DEFAULT_POOL = { size: 3, queueLimit: 64 } as const;

/**
 * DB_POOLER: what sits between this service and PostgreSQL. `auto` finds out on the first connection; `none` is a
 * direct connection (or a proxy that keeps each session on one server connection); `transaction` is a pooler that hands
 * each transaction to any server connection (PgBouncer's pool_mode = transaction), where nothing may outlive a transaction.
 */
export const POOLER_SETTINGS = ['auto', 'none', 'transaction'] as const;
export type PoolerSetting = (typeof POOLER_SETTINGS)[number];

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
