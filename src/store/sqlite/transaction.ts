import { setImmediate as nextTurn } from 'node:timers/promises';
import type Database from 'better-sqlite3';

/**
 * How long one attempt at the lock may block the thread while a command waits: between attempts the event
 * loop runs (signals, the notice), and the busy handler's polling within one keeps the wait short once it ends.
 */
const ATTEMPT_MS = 250;
/** A wait longer than this is announced once, so that a command that seems stuck says why. */
const LONG_LOCK_WAIT_MS = 2_000;

export interface WriteLockPolicy {
  /** How long a statement waits for another connection's write lock before failing (SQLite's busy_timeout). */
  busyTimeoutMs: number;
  /** When set, a write transaction waits for the lock as long as it takes, and this is told once it passes LONG_LOCK_WAIT_MS. */
  onLongWait?: () => void;
}

/** True for SQLite's "database is locked": another connection holds the lock. */
function isBusy(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'string' && code.startsWith('SQLITE_BUSY');
}

/**
 * The write turn of one process's connections to one database. SQLite's busy handler waits for another connection's
 * lock by sleeping on the thread, so a transaction this process keeps open across awaits (a streamed import, on a
 * connection of its own) takes the turn, and the process's other writers wait for it here without blocking the thread.
 */
export class WriteTurn {
  private held: Promise<void> | null = null;

  get taken(): boolean {
    return this.held !== null;
  }

  /** Resolves once no transaction of this process holds the turn; the caller must begin in the same microtask. */
  async free(): Promise<void> {
    while (this.held !== null) await this.held;
  }

  async take(): Promise<() => void> {
    while (this.held !== null) await this.held;
    let release!: () => void;
    this.held = new Promise((resolve) => (release = resolve));
    return () => {
      this.held = null;
      release();
    };
  }
}

/**
 * SQLite lets one connection write at a time, across processes. Every write of the store goes through here, so
 * that how long it may wait for that turn is decided in one place: the server's connection fails after its
 * busy timeout (and records key use only when no wait is needed), an administrative command waits its turn.
 */
export class SqliteWriteLock {
  constructor(
    private readonly db: Database.Database,
    private readonly policy: WriteLockPolicy,
    /** Shared by every connection of this process to the same database. */
    readonly turn: WriteTurn = new WriteTurn(),
  ) {
    this.setBusyTimeout(policy.busyTimeoutMs);
  }

  /** Runs `work` in one write transaction (BEGIN IMMEDIATE), or as a savepoint of the transaction already open. */
  async run<T>(work: () => T): Promise<T> {
    return this.onceBegun(
      () => this.commitOrRollBack(work),
      () => this.db.transaction(work)(),
    );
  }

  /**
   * Runs async `work` in one write transaction that stays open across its awaits, holding this process's write turn
   * meanwhile: the process's other writers wait for the turn instead of for SQLite's lock, which would block the thread.
   */
  async runHoldingTurn<T>(work: () => Promise<T>): Promise<T> {
    const release = await this.turn.take();
    try {
      return await this.onceBegun(
        async () => {
          try {
            const result = await work();
            this.db.exec('COMMIT');
            return result;
          } catch (error) {
            if (this.db.inTransaction) this.db.exec('ROLLBACK');
            throw error;
          }
        },
        () => {
          throw new Error('a transaction held across awaits cannot join one already open');
        },
        true,
      );
    } finally {
      release();
    }
  }

  /**
   * Takes the write lock with BEGIN IMMEDIATE, waiting as the policy says. Resolves to false, without beginning,
   * when this connection is already in a transaction (the caller's work then joins it).
   */
  async begin(): Promise<boolean> {
    return this.onceBegun(
      () => true,
      () => false,
    );
  }

  /**
   * Calls `begun` in the same turn of the event loop as its BEGIN IMMEDIATE succeeds, or `joined` when this connection
   * is already in a transaction. No await may come between the two: another caller's work would see the transaction
   * open and slip into it (rolled back with it, or left to run later as a deferred transaction without the lock).
   */
  private async onceBegun<T>(begun: () => T, joined: () => T, turnIsOurs = false): Promise<T> {
    if (this.db.inTransaction) return joined();
    if (!turnIsOurs && this.turn.taken) {
      await this.turn.free();
      if (this.db.inTransaction) return joined();
    }
    const { onLongWait } = this.policy;
    if (!onLongWait) {
      this.db.exec('BEGIN IMMEDIATE');
      return begun();
    }
    const started = Date.now();
    let announced = false;
    this.setBusyTimeout(ATTEMPT_MS);
    try {
      while (!this.tryBegin()) {
        if (!announced && Date.now() - started >= LONG_LOCK_WAIT_MS) {
          announced = true;
          onLongWait();
        }
        await nextTurn();
        if (this.db.inTransaction) return joined();
      }
    } finally {
      this.setBusyTimeout(this.policy.busyTimeoutMs);
    }
    return begun();
  }

  /**
   * Runs `work` in a write transaction only if the lock is free right now: never waits, so the thread never
   * blocks on another process's write. Returns false, having done nothing, when another connection holds it.
   */
  runIfFree(work: () => void): boolean {
    if (this.db.inTransaction) {
      this.db.transaction(work)();
      return true;
    }
    if (this.turn.taken) return false;
    this.setBusyTimeout(0);
    try {
      if (!this.tryBegin()) return false;
    } finally {
      this.setBusyTimeout(this.policy.busyTimeoutMs);
    }
    this.commitOrRollBack(work);
    return true;
  }

  private commitOrRollBack<T>(work: () => T): T {
    try {
      const result = work();
      this.db.exec('COMMIT');
      return result;
    } catch (error) {
      if (this.db.inTransaction) this.db.exec('ROLLBACK');
      throw error;
    }
  }

  private tryBegin(): boolean {
    try {
      this.db.exec('BEGIN IMMEDIATE');
      return true;
    } catch (error) {
      if (isBusy(error)) return false;
      throw error;
    }
  }

  private setBusyTimeout(ms: number): void {
    this.db.exec(`PRAGMA busy_timeout = ${ms}`);
  }
}
