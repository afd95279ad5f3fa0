import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import pg from 'pg';
import type { TestProject } from 'vitest/node';
import { openStore } from '../../src/store/open-store.js';
import { parseDatabaseUrl } from '../../src/domain/database-url.js';

export const DEFAULT_ADMIN_URL = 'postgres://postgres@127.0.0.1:5432/postgres';
export const DEFAULT_REDIS_URL = 'redis://127.0.0.1:6379';

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
  }
}

/**
 * Finds the PostgreSQL the suite runs against (TEST_POSTGRES_URL, else the local default). Without one,
 * the PostgreSQL runs are skipped with a plain message — except in CI, where that is a failure.
 */
export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  project.provide('redisUrl', await findRedis());
  project.provide('postgresTemplate', null);
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
    const template = await createMigratedTemplate(client, url);
    project.provide('postgresTemplate', template);
    return async () => {
      await client.query(`DROP DATABASE IF EXISTS ${template} WITH (FORCE)`).catch(() => undefined);
      await client.end().catch(() => undefined);
    };
  } catch (error) {
    await client.end().catch(() => undefined);
    throw error;
  }
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
