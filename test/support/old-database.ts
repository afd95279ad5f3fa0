import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import pg from 'pg';
import type { Migration } from '../../src/store/migrator.js';
import { POSTGRES_MIGRATIONS } from '../../src/store/postgres/migrations.js';
import { SQLITE_MIGRATIONS } from '../../src/store/sqlite/migrations.js';
import { dialectNameOf, type BackendName } from './backends.js';

/**
 * A scratch database as an earlier release left it: only the migrations below a version applied, written to
 * with plain SQL so a test can fill it before the store migrates it the rest of the way.
 */
export interface OldDatabase {
  url: string;
  /** Plain SQL, `$n` placeholders each used once; without values, several statements may run. */
  query<R = Record<string, unknown>>(sql: string, values?: unknown[]): Promise<R[]>;
  /** SQL values as each database stores them. */
  flag(value: boolean): unknown;
  tags(tags: string[]): unknown;
  object(value: Record<string, unknown>): unknown;
  dispose(): Promise<void>;
}

async function sqliteDatabase(): Promise<OldDatabase> {
  const dir = mkdtempSync(join(tmpdir(), 'contacts-old-'));
  const path = join(dir, 'contacts.db');
  const db = new Database(path);
  return {
    url: `file:${path}`,
    async query<R>(sql: string, values?: unknown[]) {
      if (values === undefined && !/^\s*SELECT/i.test(sql)) {
        db.exec(sql);
        return [];
      }
      const statement = db.prepare(sql.replace(/\$\d+/g, '?'));
      return (statement.reader ? statement.all(...(values ?? [])) : (statement.run(...(values ?? [])), [])) as R[];
    },
    flag: (value) => (value ? 1 : 0),
    tags: (tags) => JSON.stringify(tags),
    object: (value) => JSON.stringify(value),
    async dispose() {
      db.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

async function postgresDatabase(adminUrl: string): Promise<OldDatabase> {
  const name = `contacts_test_${randomBytes(6).toString('hex')}`;
  const admin = async (sql: string) => {
    const client = new pg.Client({ connectionString: adminUrl });
    await client.connect();
    try {
      await client.query(sql);
    } finally {
      await client.end();
    }
  };
  await admin(`CREATE DATABASE ${name}`);
  const url = new URL(adminUrl);
  url.pathname = `/${name}`;
  const client = new pg.Client({ connectionString: url.toString() });
  await client.connect();
  return {
    url: url.toString(),
    async query<R>(sql: string, values?: unknown[]) {
      return (await client.query(sql, values)).rows as R[];
    },
    flag: (value) => value,
    tags: (tags) => tags,
    object: (value) => value,
    async dispose() {
      await client.end();
      await admin(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
    },
  };
}

const MIGRATIONS: Record<ReturnType<typeof dialectNameOf>, readonly Migration[]> = {
  sqlite: SQLITE_MIGRATIONS,
  postgres: POSTGRES_MIGRATIONS,
};

/** `postgresAdminUrl` is required for PostgreSQL. */
export async function databaseBefore(backend: BackendName, version: number, postgresAdminUrl: string | null): Promise<OldDatabase> {
  const database = backend === 'sqlite' ? await sqliteDatabase() : await postgresDatabase(postgresAdminUrl!);
  try {
    await database.query('CREATE TABLE schema_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at TEXT NOT NULL)');
    for (const migration of MIGRATIONS[dialectNameOf(backend)].filter((each) => each.version < version)) {
      await database.query(migration.sql);
      await database.query('INSERT INTO schema_migrations VALUES ($1, $2, $3)', [
        migration.version,
        migration.name,
        new Date().toISOString(),
      ]);
    }
    return database;
  } catch (error) {
    await database.dispose();
    throw error;
  }
}

/** The backends a migration test runs on: SQLite always, PostgreSQL when the tests have a server. */
export const migrationBackends = (postgresAdminUrl: string | null) =>
  [
    { backend: 'sqlite', available: true },
    { backend: 'postgres', available: postgresAdminUrl !== null },
  ] as const;
