import type { DatabaseTarget } from '../../domain/database-url.js';
import type { MigrationSession } from './migration.js';

export type { DatabaseTarget };

/** The target of one database: `TargetOf<'sqlite'>` names a file, `TargetOf<'postgres'>` a server. */
export type TargetOf<Name extends DatabaseTarget['kind']> = Extract<DatabaseTarget, { kind: Name }>;

/**
 * Every difference between the databases that code outside their folders meets, named once, as kysely's
 * DialectAdapter: one implementation in each database's folder (`sqlite/dialect.ts`, `postgres/dialect.ts`). Shared
 * code takes a dialect instead of asking which database runs; each folder's own statements use its dialect directly.
 */
export interface Dialect<Target extends DatabaseTarget = DatabaseTarget> {
  /** The database's name: its targets' kind, and what `serve` reports. */
  readonly name: Target['kind'];

  /** DATABASE_URL as a command printed for the user may repeat it; null when it must not (it may hold a password). */
  printableUrl(target: Target): string | null;

  /** SQL that is true when the boolean `column` is false: `is_self` is a boolean on PostgreSQL, 0 or 1 on SQLite. */
  isFalse(column: string): string;
  /** SQL of `emailKey` (domain/import-matching.ts) over a text column, as migration 10 indexes it: lower() folding ASCII alone. */
  emailKey(column: string): string;
  /** SQL of `linkedinUrlKey` (domain/import-matching.ts) over a text column, as migration 14 indexes it. */
  linkedinUrlKey(column: string): string;
  /** SQL of a `count(*)` that the driver returns as a number: PostgreSQL's bigint count would arrive as text. */
  countAsNumber(count: string): string;

  /** The schema_migrations table, created if missing before the pending migrations are looked for. */
  readonly migrationsTableSql: string;
  /**
   * Runs first in the transaction that applies migrations and takes the database's migration lock, so that two
   * processes migrating at once run one after the other and the second finds nothing left to do.
   */
  acquireMigrationLock(session: MigrationSession): Promise<void>;

  /**
   * Whether the database takes one write transaction at a time across every process (SQLite's file lock). Background
   * work that writes all the time (the webhook dispatcher) then runs in one process of a cluster, as more would only
   * queue for the lock; otherwise every process runs it, sharing the work through row locks (PostgreSQL).
   */
  readonly oneWriterAtATime: boolean;

  /** True when `error` says the server could not answer at all, not that it refused the statement: another may answer it. */
  isUnreachable(error: unknown): boolean;
}
