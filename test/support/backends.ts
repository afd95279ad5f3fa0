import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { relative } from 'node:path';
import { afterAll, beforeAll, describe, expect, inject } from 'vitest';
import { openStore } from '../../src/store/open-store.js';
import { parseDatabaseUrl } from '../../src/domain/database-url.js';
import type { Store } from '../../src/store/store.js';

/** `postgres-pgbouncer`: PostgreSQL through PgBouncer in transaction mode, the database's TimeZone not UTC. */
export type BackendName = 'sqlite' | 'postgres' | 'postgres-pgbouncer';

/** The database a backend runs: PgBouncer's is PostgreSQL. */
export function dialectNameOf(backend: BackendName): 'sqlite' | 'postgres' {
  return backend === 'sqlite' ? 'sqlite' : 'postgres';
}

/**
 * The files that also run through PgBouncer (issue 36), so that a session-level habit (a named statement, a SET, a
 * temporary table, a dependence on the session's TimeZone) cannot come back unnoticed: the store's contract, and the
 * HTTP, sync, MCP and webhook scenarios that reach it through served processes.
 */
const THROUGH_PGBOUNCER: readonly (string | RegExp)[] = [
  /^test\/contract\//,
  'test/http/operations.test.ts',
  'test/http/list-contacts.test.ts',
  'test/http/conditional-requests.test.ts',
  'test/carddav/reports.test.ts',
  'test/mcp/mcp-tools.test.ts',
  'test/mcp/mcp-changes.test.ts',
  'test/webhooks/delivery.test.ts',
  'test/webhooks/two-dispatchers.test.ts',
];

/** A database's own time zone for the runs through PgBouncer: +12:45 or +13:45, so no result can pass for UTC. */
const POOLED_DATABASE_TIME_ZONE = 'Pacific/Chatham';

function backendsOfThisFile(): BackendName[] {
  const file = relative(process.cwd(), expect.getState().testPath ?? '');
  const pooled = THROUGH_PGBOUNCER.some((pattern) => (typeof pattern === 'string' ? file === pattern : pattern.test(file)));
  return pooled ? ['sqlite', 'postgres', 'postgres-pgbouncer'] : ['sqlite', 'postgres'];
}

/** A fresh, migrated database for one describe block, reachable both as a Store and by DATABASE_URL. */
export interface TestDatabase {
  backend: BackendName;
  databaseUrl: string;
  store: Store;
}

/**
 * Runs the same tests once per storage backend, each against its own fresh database: SQLite always, PostgreSQL
 * whenever the global setup found one, and for the files of THROUGH_PGBOUNCER PostgreSQL through PgBouncer whenever
 * it found one. `db()` gives the database inside tests and hooks.
 */
export function describeEachBackend(title: string, body: (db: () => TestDatabase) => void): void {
  const postgresAdminUrl = inject('postgresAdminUrl');
  const pgbouncerUrl = inject('pgbouncerUrl');
  for (const backend of backendsOfThisFile()) {
    const available = backend === 'sqlite' || (postgresAdminUrl !== null && (backend === 'postgres' || pgbouncerUrl !== null));
    describe.runIf(available)(`${title} [${backend}]`, () => {
      let database: TestDatabase | undefined;
      let dispose: (() => Promise<void>) | undefined;
      beforeAll(async () => {
        const created = await createTestDatabase(backend, postgresAdminUrl);
        database = created.database;
        dispose = created.dispose;
      });
      afterAll(async () => {
        await dispose?.();
      });
      body(() => {
        if (!database) throw new Error('test database not ready');
        return database;
      });
    });
  }
}

export async function createTestDatabase(
  backend: BackendName,
  postgresAdminUrl: string | null = inject('postgresAdminUrl'),
): Promise<{ database: TestDatabase; dispose: () => Promise<void> }> {
  if (backend === 'sqlite') {
    const dir = mkdtempSync(join(tmpdir(), 'contacts-api-test-'));
    const databaseUrl = `file:${join(dir, 'contacts.db')}`;
    const store = await openStore(parseDatabaseUrl(databaseUrl));
    await store.migrate();
    return {
      database: { backend, databaseUrl, store },
      dispose: async () => {
        await store.close();
        rmSync(dir, { recursive: true, force: true });
      },
    };
  }
  if (!postgresAdminUrl) throw new Error('PostgreSQL is not available');
  const name = `contacts_test_${randomBytes(6).toString('hex')}`;
  // The run's migrated template lives on the suite's server; another server (a test's own cluster) migrates from empty.
  const template = postgresAdminUrl === inject('postgresAdminUrl') ? inject('postgresTemplate') : null;
  await withAdmin(postgresAdminUrl, async (admin) => {
    await admin.query(`CREATE DATABASE ${name}${template ? ` TEMPLATE ${template}` : ''}`);
    if (backend === 'postgres-pgbouncer') await admin.query(`ALTER DATABASE ${name} SET TimeZone = '${POOLED_DATABASE_TIME_ZONE}'`);
  });
  const url = new URL(backend === 'postgres-pgbouncer' ? pgbouncerUrlOf() : postgresAdminUrl);
  url.pathname = `/${name}`;
  const databaseUrl = url.toString();
  const store = await openStore(parseDatabaseUrl(databaseUrl));
  await store.migrate(); // on a copy of the template, it finds every migration applied
  return {
    database: { backend, databaseUrl, store },
    dispose: async () => {
      await store.close();
      await withAdmin(postgresAdminUrl, (admin) => admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`));
    },
  };
}

function pgbouncerUrlOf(): string {
  const url = inject('pgbouncerUrl');
  if (!url) throw new Error('PgBouncer is not available');
  return url;
}

/** Runs `action` on a connection of its own to `url` (the server's admin database), closed afterwards. */
export async function withAdmin<T>(url: string, action: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return await action(client);
  } finally {
    await client.end();
  }
}
