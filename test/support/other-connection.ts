import Database from 'better-sqlite3';
import { keptForLife } from '../../src/store/sqlite/connection.js';
import { StatementCache } from '../../src/store/sqlite/statements.js';
import pg from 'pg';
import { parseDatabaseUrl } from '../../src/domain/database-url.js';
import { parseTimestamptz } from '../../src/store/postgres/timestamps.js';
import type { TestDatabase } from './backends.js';

/**
 * Another connection to the same database, outside the store: what an operator's SQL session or another process
 * does. SQL is written once with `?` placeholders, in the subset both dialects share.
 */
export interface OtherConnection {
  run(sql: string, ...params: unknown[]): Promise<void>;
  rows<T>(sql: string, ...params: unknown[]): Promise<T[]>;
  /** created_at text for `millis` plus `micros` microseconds; SQLite's canonical text keeps milliseconds, so drops them. */
  instant(millis: number, micros: number): string;
  close(): Promise<void>;
}

export async function openOtherConnection(database: TestDatabase): Promise<OtherConnection> {
  const target = parseDatabaseUrl(database.databaseUrl);
  if (target.kind === 'sqlite') {
    const db = keptForLife(new Database(target.path));
    const statements = StatementCache.of(db);
    db.exec('PRAGMA busy_timeout = 5000');
    return {
      run: async (sql, ...params) => {
        statements.get(sql).run(...params);
      },
      rows: async <T>(sql: string, ...params: unknown[]) => statements.get(sql).all(...params) as T[],
      instant: (millis) => new Date(millis).toISOString(),
      close: async () => {
        db.close();
      },
    };
  }
  // Timestamps decoded exactly as the store did before the listing was built in the database.
  const client = new pg.Client({
    connectionString: target.url,
    types: { getTypeParser: (oid, format) => (oid === 1184 ? parseTimestamptz : pg.types.getTypeParser(oid, format)) },
  });
  await client.connect();
  const numbered = (sql: string) => {
    let parameter = 0;
    // A `?` inside a quoted literal is text, not a placeholder.
    return sql.replace(/'[^']*'|\?/g, (token) => (token === '?' ? `$${(parameter += 1)}` : token));
  };
  return {
    run: async (sql, ...params) => {
      await client.query(numbered(sql), params);
    },
    rows: async <T>(sql: string, ...params: unknown[]) => (await client.query(numbered(sql), params)).rows as T[],
    instant: (millis, micros) => `${new Date(millis).toISOString().slice(0, -1)}${String(micros).padStart(3, '0')}Z`,
    close: () => client.end(),
  };
}
