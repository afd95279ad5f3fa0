import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it, vi } from 'vitest';
import { runBin } from '../support/cli.js';

describe('the commands a user is shown work from any directory', () => {
  const folder = mkdtempSync(join(tmpdir(), 'contacts-anywhere-'));
  afterAll(() => rmSync(folder, { recursive: true, force: true }));

  it('is published under a name of its own, not the registry’s unrelated contacts-api', () => {
    const manifest = JSON.parse(readFileSync('package.json', 'utf8')) as { name: string; bin: Record<string, string> };
    expect(manifest.name).toBe('contacts-read-api');
    expect(Object.keys(manifest.bin)).toEqual(['contacts-read-api']);
  });

  it('demo prints a serve command with absolute paths that serves the demo data from another directory', async () => {
    const databaseUrl = `file:${join(folder, 'contacts.db')}`;
    const demo = await runBin({ DATABASE_URL: databaseUrl, PORT: '0' }, 'demo', '--json');
    expect(demo.code).toBe(0);
    const { serve, key } = JSON.parse(demo.stdout) as { serve: string; key: string };
    expect(serve).toMatch(/^DATABASE_URL=file:\/\S+ node \/\S+\/dist\/cli\/main\.js serve$/);

    const { DATABASE_URL: _unset, ...environment } = process.env;
    // As a user pastes it into a shell; in a group of its own, so the shell and the server stop together.
    const server = spawn('sh', ['-c', `${serve} --port 0 --workers 1`], {
      cwd: '/',
      env: environment,
      stdio: ['ignore', 'ignore', 'pipe'],
      detached: true,
    });
    let stderr = '';
    server.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    try {
      const url = await vi.waitFor(async () => /listening on (http:\/\/\S+)/.exec(stderr)![1]!, { timeout: 20_000, interval: 25 });
      const response = await fetch(`${url}/api/v1/contacts?limit=1`, { headers: { authorization: `Bearer ${key}` } });
      expect(response.status).toBe(200);
      expect(((await response.json()) as { pagination: { total: number } }).pagination.total).toBe(300);
    } finally {
      process.kill(-server.pid!, 'SIGTERM');
      await once(server, 'close');
    }
  });
});
