import type Database from 'better-sqlite3';

/** Prepared statements by SQL text: prepared on first use (after migrations have created the tables), then reused. */
export class StatementCache {
  private readonly cache = new Map<string, Database.Statement>();
  constructor(readonly db: Database.Database) {}

  get(sql: string): Database.Statement {
    let statement = this.cache.get(sql);
    if (!statement) {
      statement = this.db.prepare(sql);
      this.cache.set(sql, statement);
    }
    return statement;
  }
}

/** A row as better-sqlite3 returns it. */
export type Row = Record<string, unknown>;
