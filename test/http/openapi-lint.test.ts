import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';
import { createMemoryCounter } from '../../src/rate-limit/memory-counter.js';
import { buildTestApp, type TestAppOptions } from '../support/app.js';
import { createTestDatabase } from '../support/backends.js';

const ROOT = resolve(import.meta.dirname, '../..');
const run = promisify(execFile);
const work = mkdtempSync(join(tmpdir(), 'openapi-lint-'));

/** The document as a deployment with these settings serves it, written to a file for the linters. */
async function servedDocument(name: string, options: TestAppOptions): Promise<string> {
  const { database, dispose } = await createTestDatabase('sqlite', null);
  const app = await buildTestApp(database.store, options);
  try {
    const response = await app.inject({ method: 'GET', url: '/api/v1/openapi.json' });
    const file = join(work, `${name}.json`);
    writeFileSync(file, response.body);
    return file;
  } finally {
    await app.close();
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
    config: { rateLimit: { perMinute: 600 } },
    requestCounter: createMemoryCounter({ windowMs: 60_000 }),
  },
  'no rate limit, a public URL and a contact': {
    config: { openApi: { publicUrl: 'https://contacts.acme.dev', contact: { url: 'https://acme.dev/support' } } },
  },
};

describe('the served OpenAPI document passes independent linters', () => {
  afterAll(() => rmSync(work, { recursive: true, force: true }));

  for (const [deployment, options] of Object.entries(DEPLOYMENTS)) {
    it(`Spectral spectral:oas: no error, warning, info or hint, for ${deployment}`, async () => {
      const file = await servedDocument('spectral', options);
      const findings = JSON.parse(await report('spectral', ['lint', '--ruleset', '.spectral.yaml', '--format', 'json', '--quiet', file]));
      expect(findings).toEqual([]);
    });

    it(`Redocly recommended: no error or warning, for ${deployment}`, async () => {
      const file = await servedDocument('redocly', options);
      const findings = JSON.parse(await report('redocly', ['lint', '--config', 'redocly.yaml', '--format', 'json', file]));
      expect(findings.problems).toEqual([]);
      expect(findings.totals).toMatchObject({ errors: 0, warnings: 0 });
    });
  }
});
