import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import pg from 'pg';
import type { TestProject } from 'vitest/node';
import { openStore } from '../../src/store/open-store.js';
import { parseDatabaseUrl } from '../../src/domain/database-url.js';
import { sessionModeOf } from '../../src/store/postgres/pooler.js';

export const DEFAULT_ADMIN_URL = 'postgres://postgres@127.0.0.1:5432/postgres';
export const DEFAULT_REDIS_URL = 'redis://127.0.0.1:6379';
/** `.ci/run`'s PgBouncer: transaction mode, every database name routed to 127.0.0.1:5432. */
export const DEFAULT_PGBOUNCER_URL = 'postgres://postgres@127.0.0.1:6432/postgres';

declare module 'vitest' {
  export interface ProvidedContext {
    postgresAdminUrl: string | null;
    /**
     * A database on postgresAdminUrl's server migrated once for the whole run, which createTestDatabase copies
     * (CREATE DATABASE … TEMPLATE): a copy takes a tenth of the time of migrating an empty database. Null without PostgreSQL.
     */
    postgresTemplate: string | null;
    /** The Redis the rate-limit tests share (TEST_REDIS_URL, else the local default), or null. */
    redisUrl: string | null;
    /**
     * A PgBouncer in transaction mode in front of postgresAdminUrl's server (TEST_PGBOUNCER_URL, else the local
     * default), through which the chosen files run a third time (backends.ts), or null.
     */
    pgbouncerUrl: string | null;
  }
}

/**
 * Finds the PostgreSQL the suite runs against (TEST_POSTGRES_URL, else the local default). Without one,
 * the PostgreSQL runs are skipped with a plain message — except in CI, where that is a failure.
 */
export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  project.provide('redisUrl', await findRedis());
  project.provide('postgresTemplate', null);
  project.provide('pgbouncerUrl', null);
  const url = process.env.TEST_POSTGRES_URL || DEFAULT_ADMIN_URL;
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 3000 });
  try {
    await client.connect();
    await client.query('SELECT 1');
    project.provide('postgresAdminUrl', url);
  } catch (error) {
    const reason = `PostgreSQL not reachable at ${redact(url)} (${(error as Error).message})`;
    if (process.env.CI === 'true') throw new Error(`${reason}; CI must run the PostgreSQL suite`, { cause: error });
    console.warn(`\n*** ${reason}: SKIPPING every PostgreSQL run of the suite; SQLite runs everything. ***\n`);
    project.provide('postgresAdminUrl', null);
    await client.end().catch(() => undefined);
    return async () => undefined;
  }
  try {
    // Through a pooler (TEST_POSTGRES_URL at PgBouncer) no database can be a template: the pooler keeps server
    // connections to it open, and CREATE DATABASE … TEMPLATE refuses a template in use. Each test migrates its own.
    const template = (await isDirect(client)) ? await createMigratedTemplate(client, url) : null;
    project.provide('postgresTemplate', template);
    project.provide('pgbouncerUrl', await findPgbouncer(client));
    return async () => {
      if (template !== null) await client.query(`DROP DATABASE IF EXISTS ${template} WITH (FORCE)`).catch(() => undefined);
      await client.end().catch(() => undefined);
    };
  } catch (error) {
    await client.end().catch(() => undefined);
    throw error;
  }
}

/** Whether `client` reaches the server without a pooler, by the store's own rule (src/store/postgres/pooler.ts). */
async function isDirect(client: pg.Client): Promise<boolean> {
  const { rows } = await client.query<{ pid: number }>('SELECT pg_backend_pid() AS pid');
  const { processID } = client as unknown as { processID: number | null };
  return sessionModeOf({ announcedPid: processID, serverPid: rows[0]!.pid }) === 'direct';
}

/** Creates and migrates the database every PostgreSQL test database is copied from; nothing stays connected to it. */
async function createMigratedTemplate(admin: pg.Client, adminUrl: string): Promise<string> {
  const name = `contacts_template_${randomBytes(6).toString('hex')}`;
  await admin.query(`CREATE DATABASE ${name}`);
  const url = new URL(adminUrl);
  url.pathname = `/${name}`;
  const store = await openStore(parseDatabaseUrl(url.toString()));
  try {
    await store.migrate();
  } finally {
    await store.close();
  }
  return name;
}

/**
 * Like PostgreSQL: without a PgBouncer the runs through it are skipped with a plain message, except in CI. It must lead
 * to the suite's server (the same system identifier), where the pooled runs create their databases.
 */
async function findPgbouncer(admin: pg.Client): Promise<string | null> {
  const url = process.env.TEST_PGBOUNCER_URL || DEFAULT_PGBOUNCER_URL;
  const identify = 'SELECT system_identifier::text AS id FROM pg_control_system()';
  const pooled = new pg.Client({ connectionString: url, connectionTimeoutMillis: 3000 });
  try {
    await pooled.connect();
    const { rows: through } = await pooled.query<{ id: string }>(identify);
    const { rows: direct } = await admin.query<{ id: string }>(identify);
    if (through[0]!.id !== direct[0]!.id) throw new Error('it leads to another PostgreSQL server than the suite’s');
    return url;
  } catch (error) {
    const reason = `PgBouncer not usable at ${redact(url)} (${(error as Error).message})`;
    if (process.env.CI === 'true') throw new Error(`${reason}; CI must run the PostgreSQL suite through PgBouncer`, { cause: error });
    console.warn(`\n*** ${reason}: SKIPPING the runs through PgBouncer; PostgreSQL is still tested directly. ***\n`);
    return null;
  } finally {
    await pooled.end().catch(() => undefined);
  }
}

/** Like PostgreSQL: without Redis the Redis tests are skipped with a plain message, except in CI. */
async function findRedis(): Promise<string | null> {
  const url = process.env.TEST_REDIS_URL || DEFAULT_REDIS_URL;
  const redis = new Redis(url, { lazyConnect: true, connectTimeout: 3000, maxRetriesPerRequest: 0, retryStrategy: () => null });
  redis.on('error', () => undefined);
  try {
    await redis.connect();
    await redis.ping();
    return url;
  } catch (error) {
    const reason = `Redis not reachable at ${redact(url)} (${(error as Error).message})`;
    if (process.env.CI === 'true') throw new Error(`${reason}; CI must run the Redis tests`, { cause: error });
    console.warn(`\n*** ${reason}: SKIPPING the Redis rate-limit tests; the in-memory limiter is still tested. ***\n`);
    return null;
  } finally {
    redis.disconnect();
  }
}

function redact(url: string): string {
  return url.replace(/\/\/([^:@/]*):[^@]*@/, '//$1:***@');
}
