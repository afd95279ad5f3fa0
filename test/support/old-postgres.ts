import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { POSTGRES_MIGRATIONS } from '../../src/store/postgres/migrations.js';

/** A scratch PostgreSQL database as an earlier release left it: only the migrations below a version applied. */
export interface OldPostgresDatabase {
  url: string;
  client: pg.Client;
  dispose(): Promise<void>;
}

export async function postgresDatabaseBefore(adminUrl: string, version: number): Promise<OldPostgresDatabase> {
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
  await client.query('CREATE TABLE schema_migrations (version integer PRIMARY KEY, name text NOT NULL, applied_at timestamptz NOT NULL)');
  for (const migration of POSTGRES_MIGRATIONS.filter((each) => each.version < version)) {
    await client.query(migration.sql);
    await client.query('INSERT INTO schema_migrations VALUES ($1, $2, now())', [migration.version, migration.name]);
  }
  return {
    url: url.toString(),
    client,
    async dispose() {
      await client.end();
      await admin(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
    },
  };
}
