import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { newId } from '../../src/domain/ids.js';
import type { Migration } from '../../src/store/migration.js';
import { openStore, parseDatabaseUrl } from '../../src/store/open-store.js';
import { POSTGRES_MIGRATIONS } from '../../src/store/postgres/migrations.js';
import { SQLITE_MIGRATIONS } from '../../src/store/sqlite/migrations.js';
import type { Store } from '../../src/store/store.js';

const SEARCH_BY_WORD = 4;
const postgresAdminUrl = inject('postgresAdminUrl');

/** Plain SQL on a database, `$n` placeholders each used once; without values, several statements may run. */
type Run = (sql: string, values?: unknown[]) => Promise<void>;

interface OldDatabase {
  url: string;
  run: Run;
  /** SQL values as each database stores them. */
  flag: (value: boolean) => unknown;
  tags: (tags: string[]) => unknown;
  dispose: () => Promise<void>;
}

async function sqliteDatabase(): Promise<OldDatabase> {
  const dir = mkdtempSync(join(tmpdir(), 'contacts-search-migration-'));
  const path = join(dir, 'contacts.db');
  const db = new Database(path);
  return {
    url: `file:${path}`,
    run: async (sql, values) => {
      if (values === undefined) db.exec(sql);
      else db.prepare(sql.replace(/\$\d+/g, '?')).run(...values);
    },
    flag: (value) => (value ? 1 : 0),
    tags: (tags) => JSON.stringify(tags),
    dispose: async () => {
      db.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

async function postgresDatabase(adminUrl: string): Promise<OldDatabase> {
  const name = `contacts_test_${randomBytes(6).toString('hex')}`;
  const admin = new pg.Client({ connectionString: adminUrl });
  await admin.connect();
  await admin.query(`CREATE DATABASE ${name}`);
  await admin.end();
  const url = new URL(adminUrl);
  url.pathname = `/${name}`;
  const client = new pg.Client({ connectionString: url.toString() });
  await client.connect();
  return {
    url: url.toString(),
    run: async (sql, values) => {
      await client.query(sql, values);
    },
    flag: (value) => value,
    tags: (tags) => tags,
    dispose: async () => {
      await client.end();
      const cleanup = new pg.Client({ connectionString: adminUrl });
      await cleanup.connect();
      await cleanup.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      await cleanup.end();
    },
  };
}

const backends = [
  { backend: 'sqlite', migrations: SQLITE_MIGRATIONS, open: sqliteDatabase, available: true },
  { backend: 'postgres', migrations: POSTGRES_MIGRATIONS, open: () => postgresDatabase(postgresAdminUrl!), available: postgresAdminUrl !== null },
] as const;

for (const { backend, migrations, open, available } of backends) {
  describe.runIf(available)(`migration ${SEARCH_BY_WORD} (search by word) over existing contacts [${backend}]`, () => {
    let database: OldDatabase;
    let store: Store;
    const owner = newId();
    const other = newId();
    const ids = { ada: newId(), grace: newId(), merged: newId(), self: newId(), theirs: newId() };

    beforeAll(async () => {
      database = await open();
      const { run, flag, tags } = database;
      // A database as the releases before word search left it: the earlier migrations applied, with data.
      await run('CREATE TABLE schema_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at TEXT NOT NULL)');
      for (const migration of migrations.filter((each: Migration) => each.version < SEARCH_BY_WORD)) {
        await run(migration.sql);
        await run('INSERT INTO schema_migrations VALUES ($1, $2, $3)', [migration.version, migration.name, new Date().toISOString()]);
      }
      const now = new Date().toISOString();
      for (const [id, email] of [[owner, 'owner@example.com'], [other, 'other@example.com']]) {
        await run("INSERT INTO users (id, email, plan, created_at, updated_at) VALUES ($1, $2, 'pro', $3, $4)", [id, email, now, now]);
      }
      const contact = 'INSERT INTO contacts (id, owner_id, is_self, merged_into, name, email, tags, created_at, updated_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)';
      const at = (minute: number) => new Date(Date.UTC(2024, 0, 1, 0, minute)).toISOString();
      await run(contact, [ids.self, owner, flag(true), null, 'Ada Self', 'owner@example.com', null, at(0), at(0)]);
      await run(contact, [ids.ada, owner, flag(false), null, 'Ada Lovelace', 'ada@example.com', tags(['mathematician']), at(1), at(1)]);
      await run(contact, [ids.grace, owner, flag(false), null, 'Grace Hopper', 'grace@navy.mil', tags(['admiral']), at(2), at(2)]);
      await run(contact, [ids.merged, owner, flag(false), ids.ada, 'Ada Duplicate', null, null, at(3), at(3)]);
      await run(contact, [ids.theirs, other, flag(false), null, 'Ada Other', null, null, at(4), at(4)]);
      store = await openStore(parseDatabaseUrl(database.url));
    });
    afterAll(async () => {
      await store?.close();
      await database?.dispose();
    });

    it('indexes every listable contact already there, and only those', async () => {
      expect(await store.migrate()).toContain(SEARCH_BY_WORD);
      const names = async (query: string, ownerId = owner) => (await store.contacts.search(ownerId, query, 10)).map((found) => found.name);
      expect(await names('ada')).toEqual(['Ada Lovelace']);
      expect(await names('math')).toEqual(['Ada Lovelace']);
      expect(await names('navy')).toEqual(['Grace Hopper']);
      expect(await names('duplicate')).toEqual([]);
      expect(await names('self')).toEqual([]);
      expect(await names('ada', other)).toEqual(['Ada Other']);
    });
  });
}
