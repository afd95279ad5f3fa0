import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';
import { createMemoryCounter } from '../../src/rate-limit/memory-counter.js';
import type { Store } from '../../src/store/store.js';
import { startAdminApp } from '../support/admin-app.js';
import { buildTestApp, type TestAppOptions } from '../support/app.js';
import { createTestDatabase } from '../support/backends.js';

const ROOT = resolve(import.meta.dirname, '../..');
const run = promisify(execFile);
const work = mkdtempSync(join(tmpdir(), 'openapi-lint-'));

/** The document as a deployment with these settings serves it, written to a file for the linters. */
async function servedDocument(name: string, options: TestAppOptions): Promise<string> {
  return writtenDocument(name, async (store) => {
    const app = await buildTestApp(store, options);
    try {
      return (await app.inject({ method: 'GET', url: '/api/v1/openapi.json' })).body;
    } finally {
      await app.close();
    }
  });
}

/** The admin API's document, as GET /admin/v1/openapi.json serves it. */
async function servedAdminDocument(name: string): Promise<string> {
  return writtenDocument(name, async (store) => {
    const admin = await startAdminApp(store);
    try {
      return (await admin.request('GET', '/admin/v1/openapi.json')).text;
    } finally {
      await admin.close();
    }
  });
}

async function writtenDocument(name: string, serve: (store: Store) => Promise<string>): Promise<string> {
  const { database, dispose } = await createTestDatabase('sqlite', null);
  try {
    const file = join(work, `${name}.json`);
    writeFileSync(file, await serve(database.store));
    return file;
  } finally {
    await dispose();
  }
}

/** Runs a linter that exits non-zero on findings, and returns its report either way. */
async function report(command: string, args: string[]): Promise<string> {
  try {
    // Redocly would otherwise send telemetry and look for a newer version.
    const env = { ...process.env, REDOCLY_TELEMETRY: 'off', REDOCLY_SUPPRESS_UPDATE_NOTICE: 'true' };
    return (await run(join(ROOT, 'node_modules/.bin', command), args, { cwd: ROOT, env })).stdout;
  } catch (error) {
    return (error as { stdout: string }).stdout;
  }
}

const DEPLOYMENTS: Record<string, TestAppOptions> = {
  'the default (rate-limited, servers `/`)': {
    config: { rateLimit: { perMinute: 600, authFailuresPerMinute: 60 } },
    requestCounter: createMemoryCounter({ windowMs: 60_000 }),
  },
  'no rate limit, a public URL and a contact': {
    config: { openApi: { publicUrl: 'https://contacts.acme.dev', contact: { url: 'https://acme.dev/support' } } },
  },
};

describe('the served OpenAPI document passes independent linters', () => {
  afterAll(() => rmSync(work, { recursive: true, force: true }));

  /** Each document, by what serves it, written to a file of the given name. */
  const documents = new Map<string, (name: string) => Promise<string>>([
    ...Object.entries(DEPLOYMENTS).map(([deployment, options]) => [deployment, (name: string) => servedDocument(name, options)] as const),
    ['the admin API’s document', servedAdminDocument],
  ]);
  for (const [deployment, served] of documents) {
    it(`Spectral spectral:oas: no error, warning, info or hint, for ${deployment}`, async () => {
      const file = await served('spectral');
      const findings = JSON.parse(await report('spectral', ['lint', '--ruleset', '.spectral.yaml', '--format', 'json', '--quiet', file]));
      expect(findings).toEqual([]);
    });

    it(`Redocly recommended: no error or warning, for ${deployment}`, async () => {
      const file = await served('redocly');
      const findings = JSON.parse(await report('redocly', ['lint', '--config', 'redocly.yaml', '--format', 'json', file]));
      expect(findings.problems).toEqual([]);
      expect(findings.totals).toMatchObject({ errors: 0, warnings: 0 });
    });
  }
});
