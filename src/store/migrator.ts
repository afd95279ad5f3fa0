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

/** What differs between databases: the schema_migrations DDL and how the migration lock is held. */
export interface MigrationDialect {
  createTableSql: string;
  /**
   * Runs `work` in one transaction that holds the database's migration lock, so two processes migrating at once run
   * one after the other and the second finds nothing left to do: PostgreSQL takes an advisory lock, SQLite an
   * immediate (write) transaction.
   */
  withLock<T>(work: (session: MigrationSession) => Promise<T>): Promise<T>;
  /**
   * The applied versions read without the lock, so that a process with nothing to apply starts without waiting for
   * another process's write; absent where taking the lock costs nothing.
   */
  peekAppliedVersions?(): Promise<Set<number>>;
}

/** Applies the pending migrations, in order, all in one transaction. Returns the versions applied. */
export async function runMigrations(dialect: MigrationDialect, migrations: readonly Migration[]): Promise<number[]> {
  if (dialect.peekAppliedVersions && pendingMigrations(migrations, await dialect.peekAppliedVersions()).length === 0) return [];
  return dialect.withLock(async (session) => {
    await session.exec(dialect.createTableSql);
    const pending = pendingMigrations(migrations, await session.appliedVersions());
    for (const migration of pending) {
      await session.exec(migration.sql);
      await session.record(migration, new Date().toISOString());
    }
    return pending.map((migration) => migration.version);
  });
}
