import pg from 'pg';
import type { TestProject } from 'vitest/node';

export const DEFAULT_ADMIN_URL = 'postgres://postgres@127.0.0.1:5432/postgres';

declare module 'vitest' {
  export interface ProvidedContext {
    postgresAdminUrl: string | null;
  }
}

/**
 * Finds the PostgreSQL the suite runs against (TEST_POSTGRES_URL, else the local default). Without one,
 * the PostgreSQL runs are skipped with a plain message — except in CI, where that is a failure.
 */
export default async function setup(project: TestProject): Promise<void> {
  const url = process.env.TEST_POSTGRES_URL || DEFAULT_ADMIN_URL;
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 3000 });
  try {
    await client.connect();
    await client.query('SELECT 1');
    project.provide('postgresAdminUrl', url);
  } catch (error) {
    const reason = `PostgreSQL not reachable at ${redact(url)} (${(error as Error).message})`;
    if (process.env.CI === 'true') throw new Error(`${reason}; CI must run the PostgreSQL suite`);
    console.warn(`\n*** ${reason}: SKIPPING every PostgreSQL run of the suite; SQLite runs everything. ***\n`);
    project.provide('postgresAdminUrl', null);
  } finally {
    await client.end().catch(() => undefined);
  }
}

function redact(url: string): string {
  return url.replace(/\/\/([^:@/]+):[^@]*@/, '//$1:***@');
}
