import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { beforeAll, describe, expect, it } from 'vitest';

const run = promisify(execFile);
const DIST_CLIENT = resolve('dist/client');

describe('the contacts-read-api/client package export', () => {
  beforeAll(() => {
    if (!existsSync(join(DIST_CLIENT, 'index.js'))) throw new Error('dist/client is missing: run `npm run build` (npm test does it)');
  });

  it('resolves through package.json "exports" in plain Node and exposes the client and its errors', async () => {
    const { stdout } = await run(process.execPath, [
      '--input-type=module',
      '-e',
      "const m = await import('contacts-read-api/client'); console.log(Object.keys(m).sort().join(','))",
    ]);
    expect(stdout.trim().split(',')).toEqual([
      'AuthenticationError', 'BadRequestError', 'ContactsApiError', 'ContactsClient', 'NetworkError', 'PermissionError',
      'RateLimitError', 'ServerError', 'TimeoutError', 'UnexpectedResponseError',
    ]);
  });

  it('imports nothing outside dist/client at runtime or in its declarations: no dependency beyond the platform', async () => {
    const files = (await readdir(DIST_CLIENT)).filter((name) => name.endsWith('.js') || name.endsWith('.d.ts'));
    expect(files).toContain('index.d.ts');
    let imports = 0;
    for (const name of files) {
      const text = await readFile(join(DIST_CLIENT, name), 'utf8');
      const specifiers = [...text.matchAll(/\b(?:from\s+|import\(\s*)(['"])([^'"]+)\1/g)].map((match) => match[2]);
      for (const specifier of specifiers) expect(specifier, `${name} imports ${specifier}`).toMatch(/^\.\/[a-z-]+\.js$/);
      imports += specifiers.length;
    }
    expect(imports).toBeGreaterThan(10);
  });

  it('type-checks a consumer that imports it by the package name', async () => {
    const dir = await mkdtemp(join(resolve('.'), '.client-consumer-'));
    try {
      const consumer = join(dir, 'consumer.ts');
      await writeFile(consumer, [
        "import { ContactsClient, PermissionError, type Contact } from 'contacts-read-api/client';",
        "const client = new ContactsClient({ baseUrl: 'http://localhost:3000', apiKey: 'key' });",
        'export async function names(): Promise<(string | null)[]> {',
        '  const page = await client.listContacts({ limit: 10 });',
        '  const total: number = page.pagination.total;',
        '  const all: Contact[] = [];',
        '  for await (const contact of client.contacts({ pageSize: 50 })) all.push(contact);',
        "  return [String(total), ...all.map((contact) => contact.name), new PermissionError('x', {}).reason];",
        '}',
        '',
      ].join('\n'));
      const tsc = resolve('node_modules/typescript/bin/tsc');
      const result = await run(process.execPath, [
        tsc, '--noEmit', '--strict', '--module', 'nodenext', '--moduleResolution', 'nodenext', '--target', 'es2023',
        '--types', 'node', '--skipLibCheck', consumer,
      ]).catch((error: { stdout: string }) => ({ stdout: error.stdout, failed: true }));
      expect(result.stdout).toBe('');
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
