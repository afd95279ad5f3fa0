import { execFile } from 'node:child_process';
import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const run = promisify(execFile);
const PACKAGE_DIR = resolve('packages/client');
const NPM = process.platform === 'win32' ? 'npm.cmd' : 'npm';

/**
 * The client is published on its own: packed as npm would publish it and installed into an empty project without
 * the network, it must work with nothing else installed.
 */
/** Every file of an unpacked package, relative to its root. */
async function filesOf(root: string): Promise<string[]> {
  const entries = await readdir(root, { recursive: true, withFileTypes: true });
  return entries.filter((entry) => entry.isFile()).map((entry) => join(entry.parentPath, entry.name).slice(root.length + 1));
}

describe('the contacts-read-api-client package, installed on its own', () => {
  let project: string;
  let tarball: string;

  beforeAll(async () => {
    project = await mkdtemp(join(tmpdir(), 'client-consumer-'));
    const { stdout } = await run(NPM, ['pack', '--json', '--pack-destination', project], { cwd: PACKAGE_DIR });
    [{ filename: tarball }] = JSON.parse(stdout) as [{ filename: string }];
    await writeFile(join(project, 'package.json'), JSON.stringify({ name: 'consumer', private: true, type: 'module' }));
    await run(NPM, ['install', '--offline', '--no-audit', '--no-fund', `./${tarball}`], { cwd: project });
  }, 120_000);

  afterAll(async () => {
    await rm(project, { recursive: true, force: true });
  });

  it('installs exactly one package: it has no dependencies', async () => {
    const installed = (await readdir(join(project, 'node_modules'))).filter((name) => !name.startsWith('.'));
    expect(installed).toEqual(['contacts-read-api-client']);
    const manifest = JSON.parse(await readFile(join(project, 'node_modules/contacts-read-api-client/package.json'), 'utf8'));
    expect(manifest.dependencies ?? {}).toEqual({});
  });

  it('is installed the way its README and docs/client.md say, from the tarball npm pack writes', async () => {
    for (const doc of [join(PACKAGE_DIR, 'README.md'), resolve('docs/client.md')]) {
      const text = await readFile(doc, 'utf8');
      expect(text, doc).toContain(`npm install ./${tarball}`);
      expect(text, doc).toContain(`writes ${tarball}`);
    }
  });

  it('ships its LICENSE, and every source map, map source and README link resolves inside the package', async () => {
    const root = join(project, 'node_modules/contacts-read-api-client');
    const files = new Set(await filesOf(root));
    expect(files).toContain('LICENSE');
    expect(await readFile(join(root, 'LICENSE'), 'utf8')).toMatch(/^MIT License/);
    const references: string[] = [];
    for (const file of [...files].filter((name) => name.endsWith('.js') || name.endsWith('.d.ts'))) {
      for (const [, map] of (await readFile(join(root, file), 'utf8')).matchAll(/^\/\/# sourceMappingURL=(\S+)$/gm)) {
        const mapFile = join(dirname(file), map!);
        references.push(mapFile);
        if (!files.has(mapFile)) continue;
        const { sources, sourceRoot = '' } = JSON.parse(await readFile(join(root, mapFile), 'utf8')) as {
          sources: string[];
          sourceRoot?: string;
        };
        references.push(...sources.map((source) => join(dirname(mapFile), sourceRoot, source)));
      }
    }
    const readme = await readFile(join(root, 'README.md'), 'utf8');
    const links = [...readme.matchAll(/\]\(([^)#]+)(?:#[^)]*)?\)/g)].map((match) => match[1]!);
    references.push(...links.filter((link) => !/^https?:\/\//.test(link)));
    expect(references.length).toBeGreaterThan(10);
    expect(references.filter((reference) => !files.has(reference))).toEqual([]);
  });

  it('imports by name in plain Node and exposes the client and its errors', async () => {
    const { stdout } = await run(
      process.execPath,
      ['--input-type=module', '-e', "const m = await import('contacts-read-api-client'); console.log(Object.keys(m).sort().join(','))"],
      { cwd: project },
    );
    expect(stdout.trim().split(',')).toEqual([
      'AuthenticationError',
      'BadRequestError',
      'ConflictError',
      'ContactsAdminClient',
      'ContactsApiError',
      'ContactsClient',
      'IdempotencyKeyReusedError',
      'NetworkError',
      'NotFoundError',
      'PermissionError',
      'RateLimitError',
      'SINCE_BEGINNING',
      'ServerError',
      'SyncExpiredError',
      'TimeoutError',
      'UnexpectedResponseError',
    ]);
  });

  it('ships only its own files, which import nothing outside the package', async () => {
    const dist = join(project, 'node_modules/contacts-read-api-client/dist');
    const files = (await readdir(dist)).filter((name) => name.endsWith('.js') || name.endsWith('.d.ts'));
    expect(files).toContain('index.d.ts');
    let imports = 0;
    for (const name of files) {
      const text = await readFile(join(dist, name), 'utf8');
      const specifiers = [...text.matchAll(/\b(?:from\s+|import\(\s*)(['"])([^'"]+)\1/g)].map((match) => match[2]);
      for (const specifier of specifiers) expect(specifier, `${name} imports ${specifier}`).toMatch(/^\.\/[a-z-]+\.js$/);
      imports += specifiers.length;
    }
    expect(imports).toBeGreaterThan(10);
  });

  it('type-checks a consumer that imports it by the package name', async () => {
    const consumer = join(project, 'consumer.ts');
    await writeFile(
      consumer,
      [
        "import { ContactsAdminClient, ContactsClient, PermissionError, type Contact, type CreatedKey } from 'contacts-read-api-client';",
        "const client = new ContactsClient({ baseUrl: 'http://localhost:3000', apiKey: 'key' });",
        "const admin = new ContactsAdminClient({ baseUrl: 'http://localhost:3001', adminToken: 'token' });",
        'export async function newKey(email: string): Promise<CreatedKey> {',
        "  const user = await admin.createUser({ email, plan: 'pro' }, { idempotencyKey: email });",
        "  return admin.createKey(user.id, { label: 'settings page' });",
        '}',
        'export async function names(): Promise<(string | null)[]> {',
        '  const page = await client.listContacts({ limit: 10 });',
        '  const total: number = page.pagination.total;',
        '  const all: Contact[] = [];',
        '  for await (const contact of client.contacts({ pageSize: 50 })) all.push(contact);',
        "  return [String(total), ...all.map((contact) => contact.name), new PermissionError('x', {}).reason];",
        '}',
        '',
      ].join('\n'),
    );
    const tsc = resolve('node_modules/typescript/bin/tsc');
    const result = await run(
      process.execPath,
      [
        tsc,
        '--noEmit',
        '--strict',
        '--module',
        'nodenext',
        '--moduleResolution',
        'nodenext',
        '--target',
        'es2023',
        '--lib',
        'es2023,dom',
        '--skipLibCheck',
        consumer,
      ],
      { cwd: project },
    ).catch((error: { stdout: string }) => ({ stdout: error.stdout }));
    expect(result.stdout).toBe('');
  });
});
