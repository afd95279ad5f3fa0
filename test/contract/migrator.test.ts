import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, describe, expect, inject, it } from 'vitest';
import { POSTGRES_MIGRATIONS } from '../../src/store/postgres/migrations.js';
import { SQLITE_MIGRATIONS } from '../../src/store/sqlite/migrations.js';
import { openStore } from '../../src/store/open-store.js';
import { parseDatabaseUrl } from '../../src/domain/database-url.js';
import { runBin } from '../support/cli.js';

const INSTANCES = 4;
const postgresAdminUrl = inject('postgresAdminUrl');
const cleanups: (() => Promise<void>)[] = [];

afterAll(async () => {
  for (const cleanup of cleanups) await cleanup();
});

async function emptySqliteDatabase(): Promise<string> {
  const dir = mkdtempSync(join(tmpdir(), 'contacts-api-migrator-'));
  cleanups.push(async () => rmSync(dir, { recursive: true, force: true }));
  return `file:${join(dir, 'contacts.db')}`;
}

async function emptyPostgresDatabase(): Promise<string> {
  const name = `contacts_migrator_${randomBytes(6).toString('hex')}`;
  const admin = async (sql: string) => {
    const client = new pg.Client({ connectionString: postgresAdminUrl! });
    await client.connect();
    await client.query(sql).finally(() => client.end());
  };
  await admin(`CREATE DATABASE ${name}`);
  cleanups.push(() => admin(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`));
  const url = new URL(postgresAdminUrl!);
  url.pathname = `/${name}`;
  return url.toString();
}

/** SQLite's connections in one process would wait on each other's lock synchronously: each instance is a process. */
async function migrateInProcesses(databaseUrl: string): Promise<number[][]> {
  const runs = await Promise.all(Array.from({ length: INSTANCES }, () => runBin({ DATABASE_URL: databaseUrl }, 'migrate', '--json')));
  return runs.map((run) => {
    expect(run, run.stderr).toMatchObject({ code: 0 });
    return (JSON.parse(run.stdout) as { applied: number[] }).applied;
  });
}

/** Stores with their own pools, started together, so their transactions overlap for sure. */
async function migrateInPools(databaseUrl: string): Promise<number[][]> {
  const stores = await Promise.all(Array.from({ length: INSTANCES }, () => openStore(parseDatabaseUrl(databaseUrl))));
  try {
    return await Promise.all(stores.map((store) => store.migrate()));
  } finally {
    await Promise.all(stores.map((store) => store.close()));
  }
}

const BACKENDS = [
  { name: 'sqlite', available: true, emptyDatabase: emptySqliteDatabase, migrateAtOnce: migrateInProcesses, migrations: SQLITE_MIGRATIONS },
  {
    name: 'postgres',
    available: postgresAdminUrl !== null,
    emptyDatabase: emptyPostgresDatabase,
    migrateAtOnce: migrateInPools,
    migrations: POSTGRES_MIGRATIONS,
  },
] as const;

for (const backend of BACKENDS) {
  describe.runIf(backend.available)(`the migration runner [${backend.name}]`, () => {
    it('applies every migration exactly once when several instances start on an empty database at the same moment', async () => {
      const databaseUrl = await backend.emptyDatabase();
      const runs = await backend.migrateAtOnce(databaseUrl);
      const versions = backend.migrations.map((migration) => migration.version).sort((a, b) => a - b);
      expect(runs.flat().sort((a, b) => a - b)).toEqual(versions);
      // The instances that lost the race found nothing left to do.
      expect(runs.filter((applied) => applied.length === 0)).toHaveLength(INSTANCES - 1);

      const store = await openStore(parseDatabaseUrl(databaseUrl));
      try {
        expect(await store.migrate()).toEqual([]);
      } finally {
        await store.close();
      }
    });
  });
}
