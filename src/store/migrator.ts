import type { Dialect } from './dialect.js';

/** One versioned schema change. Versions are applied in ascending order, each exactly once. */
export interface Migration {
  version: number;
  name: string;
  sql: string;
}

export function pendingMigrations(all: readonly Migration[], applied: ReadonlySet<number>): Migration[] {
  return [...all].sort((a, b) => a.version - b.version).filter((migration) => !applied.has(migration.version));
}

/** The statements a migration run needs, on the one connection that holds the migration lock. */
export interface MigrationSession {
  exec(sql: string): Promise<void>;
  /** The versions recorded in schema_migrations; empty when the table does not exist yet. */
  appliedVersions(): Promise<Set<number>>;
  record(migration: Migration, appliedAt: string): Promise<void>;
}

/** A store's connection as the migrations use it. */
export interface MigrationConnection {
  /** Runs `work` in one write transaction, on one connection, committed when `work` resolves. */
  inTransaction<T>(work: (session: MigrationSession) => Promise<T>): Promise<T>;
  /**
   * The applied versions read outside the transaction, so that a process with nothing to apply starts without waiting
   * for another process's write; absent where taking the lock costs nothing.
   */
  peekAppliedVersions?(): Promise<Set<number>>;
}

/** Applies the pending migrations, in order, all in one transaction that holds the migration lock. Returns the versions applied. */
export async function runMigrations(
  dialect: Dialect,
  connection: MigrationConnection,
  migrations: readonly Migration[],
): Promise<number[]> {
  if (connection.peekAppliedVersions && pendingMigrations(migrations, await connection.peekAppliedVersions()).length === 0) return [];
  return connection.inTransaction(async (session) => {
    await dialect.acquireMigrationLock(session);
    await session.exec(dialect.migrationsTableSql);
    const pending = pendingMigrations(migrations, await session.appliedVersions());
    for (const migration of pending) {
      await session.exec(migration.sql);
      await session.record(migration, new Date().toISOString());
    }
    return pending.map((migration) => migration.version);
  });
}
