import type { PoolerSetting } from '../../domain/database-url.js';

/** How the server opens a store; the CLI opens stores without these limits (imports may run long). */
export interface StoreOptions {
  /**
   * How long one statement may take: PostgreSQL's statement_timeout (unset: no limit) and SQLite's
   * busy_timeout, the wait for another connection's write lock (unset: 5 s).
   */
  statementTimeoutMs?: number;
  /**
   * Set by the administrative commands: on SQLite, where one process writes at a time, a write waits for another
   * process's write as long as it takes instead of failing after the busy timeout, and this is called once with a
   * line to show when a wait passes 2 s. PostgreSQL writers wait for row locks anyway, and are not told.
   */
  onLongLockWait?: (notice: string) => void;
  /**
   * How long a listing reuses an owner's count and version before asking the database again (unset: 0, ask on
   * every page). Contact changes become visible to listings within this bound.
   */
  listingStateTtlMs?: number;
  /** Bytes of listing pages a store keeps as documents (unset: 4 MiB): the pages read again, answered without a read. */
  pageCacheBytes?: number;
  /**
   * PostgreSQL only: connections a process keeps (unset: 3), and how many statements may wait for one before the next
   * is refused at once with a 503 (unset: 64). On a few cores, few connections answer faster than many: PostgreSQL's
   * processes then compete with the server's for the CPU. A statement that would wait behind a full queue could not
   * be answered in time anyway; refusing it says so in a millisecond instead of holding the request.
   */
  pool?: { size: number; queueLimit: number };
  /** PostgreSQL only: what sits between the pool and the server (DB_POOLER; unset: `auto`, found out on the first connection). */
  pooler?: PoolerSetting;
  /**
   * SQLite only: open the database file only if it exists, never creating it or its folder (the server and every
   * command do this, but `migrate` and `demo`, which create). PostgreSQL never creates a database.
   */
  mustExist?: boolean;
}
