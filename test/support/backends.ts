import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { afterAll, beforeAll, describe, inject } from 'vitest';
import { openStore } from '../../src/store/open-store.js';
import { parseDatabaseUrl } from '../../src/domain/database-url.js';
import type { Store } from '../../src/store/store.js';

export type BackendName = 'sqlite' | 'postgres';

/** A fresh, migrated database for one describe block, reachable both as a Store and by DATABASE_URL. */
export interface TestDatabase {
  backend: BackendName;
  databaseUrl: string;
  store: Store;
}

/**
 * Runs the same tests once per storage backend, each against its own fresh database: SQLite always,
 * PostgreSQL whenever the global setup found one. `db()` gives the database inside tests and hooks.
 */
export function describeEachBackend(title: string, body: (db: () => TestDatabase) => void): void {
  const postgresAdminUrl = inject('postgresAdminUrl');
  for (const backend of ['sqlite', 'postgres'] as const) {
    const available = backend === 'sqlite' || postgresAdminUrl !== null;
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
  await withAdmin(postgresAdminUrl, (admin) => admin.query(`CREATE DATABASE ${name}${template ? ` TEMPLATE ${template}` : ''}`));
  const url = new URL(postgresAdminUrl);
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
