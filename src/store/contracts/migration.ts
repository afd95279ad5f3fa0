/** One versioned schema change. Versions are applied in ascending order, each exactly once. */
export interface Migration {
  version: number;
  name: string;
  sql: string;
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
