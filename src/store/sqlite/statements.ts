import type Database from 'better-sqlite3';

/**
 * Prepared statements by SQL text: prepared on first use (after migrations have created the tables), then reused for
 * as long as the process lives. better-sqlite3 12 frees a statement or a database from V8's garbage collector, and
 * on Node 24.19 and later that aborts the whole process ("Assertion failed: (env) != nullptr" in
 * RemoveEnvironmentCleanupHook) when the collection runs from a timer or idle task; better-sqlite3 13 fixes it but
 * does not run on Node 20. So none is ever garbage: databases are kept from open to exit (connection.ts), each one's
 * statements are prepared here, once per SQL text, and pragmas go through `exec`, which makes no statement object.
 */
export class StatementCache {
  private readonly cache = new Map<string, Database.Statement>();
  private constructor(readonly db: Database.Database) {}

  /** The one cache of `db`'s statements. */
  static of(db: Database.Database): StatementCache {
    let statements = cachesByDatabase.get(db);
    if (!statements) {
      statements = new StatementCache(db);
      cachesByDatabase.set(db, statements);
    }
    return statements;
  }

  get(sql: string): Database.Statement {
    let statement = this.cache.get(sql);
    if (!statement) {
      statement = this.db.prepare(sql);
      this.cache.set(sql, statement);
    }
    return statement;
  }
}

const cachesByDatabase = new WeakMap<Database.Database, StatementCache>();

/** A row as better-sqlite3 returns it. */
export type Row = Record<string, unknown>;
