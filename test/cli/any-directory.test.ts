import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it, vi } from 'vitest';
import { runBin } from '../support/cli.js';
import { freePort } from '../support/listen.js';

describe('the commands a user is shown work from any directory', () => {
  const folder = mkdtempSync(join(tmpdir(), 'contacts-anywhere-'));
  afterAll(() => rmSync(folder, { recursive: true, force: true }));

  it('is published under a name of its own, not the registry’s unrelated contacts-api', () => {
    const manifest = JSON.parse(readFileSync('package.json', 'utf8')) as { name: string; bin: Record<string, string> };
    expect(manifest.name).toBe('contacts-read-api');
    expect(Object.keys(manifest.bin)).toEqual(['contacts-read-api']);
  });

  it('demo prints a serve command with absolute paths that serves the demo data from another directory, where its curl line points', async () => {
    const databaseUrl = `file:${join(folder, 'contacts.db')}`;
    const port = await freePort();
    const demo = await runBin({ DATABASE_URL: databaseUrl, PORT: String(port) }, 'demo', '--json');
    expect(demo.code).toBe(0);
    const { serve, key, curl } = JSON.parse(demo.stdout) as { serve: string; key: string; curl: string };
    expect(serve).toMatch(new RegExp(`^DATABASE_URL=file:/\\S+ node /\\S+/dist/cli/main\\.js serve --port ${port}$`));

    // Pasted into a shell that has neither variable: the command alone says where to listen.
    const { DATABASE_URL: _database, PORT: _port, HOST: _host, ...environment } = process.env;
    // In a group of its own, so the shell and the server stop together.
    const server = spawn('sh', ['-c', `${serve} --workers 1`], {
      cwd: '/',
      env: environment,
      stdio: ['ignore', 'ignore', 'pipe'],
      detached: true,
    });
    let stderr = '';
    server.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    try {
      const url = await vi.waitFor(async () => /listening on (http:\/\/\S+)/.exec(stderr)![1]!, { timeout: 20_000, interval: 25 });
      expect(curl).toContain(`"${url}/api/v1/contacts?limit=2"`);
      const response = await fetch(`${url}/api/v1/contacts?limit=1`, { headers: { authorization: `Bearer ${key}` } });
      expect(response.status).toBe(200);
      expect(((await response.json()) as { pagination: { total: number } }).pagination.total).toBe(300);
    } finally {
      process.kill(-server.pid!, 'SIGTERM');
      await once(server, 'close');
    }
  });
});
