import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { existsSync, mkdtempSync } from 'node:fs';
import { readdir, readFile, writeFile } from 'node:fs/promises';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { runCli } from '../../src/cli/program.js';
import type { Contact } from 'contacts-read-api-client';
import { generateDemoContacts } from '../../src/demo/demo-contacts.js';
import { normalizeContactInput } from '../../src/domain/contact-input.js';
import { readVcardRecords } from '../../src/import/formats/vcard.js';
import type { Store } from '../../src/store/store.js';
import { buildTestApp } from '../support/app.js';
import { createTestDatabase, describeEachBackend, type TestDatabase } from '../support/backends.js';
import { BIN, cliJson, runBin } from '../support/cli.js';
import { createKey, createUser } from '../support/seed.js';
import { AWKWARD_CONTACT } from '../support/awkward-contact.js';
import { readAll, readWholeFile } from '../support/read-records.js';

/** Values that test quoting, escaping and folding, beside realistic generated contacts. */
const AWKWARD = [
  {
    ...AWKWARD_CONTACT,
    birthday: '--12-09',
    description: `Met at the offsite.\nNotes: ${'日本語のテキストと絵文字 🎉, '.repeat(5)}`,
    created_at: '2023-01-01T00:00:00.000Z',
  },
  { name: 'Only A Name', tags: [], birthday: 'around 1950', created_at: '2023-01-01T00:00:00.001Z' },
];

interface Served {
  database: TestDatabase;
  app: FastifyInstance;
  url: string;
  userId: string;
  key: string;
}

async function serve(database: TestDatabase): Promise<Served> {
  const app = await buildTestApp(database.store);
  const url = await app.listen({ host: '127.0.0.1', port: 0 });
  const user = await createUser(database.store);
  return { database, app, url, userId: user.id, key: (await createKey(database.store, user.id)).key };
}

interface ExportRun {
  code: number;
  stdout: string;
  stderr: string;
}

/** Runs `contacts-api export` in this process with CONTACTS_API_KEY set (when given) and stderr a terminal or not. */
async function exportCli(key: string | undefined, args: string[], stderrIsTTY = false): Promise<ExportRun> {
  let stdout = '';
  let stderr = '';
  const code = await runCli(['export', ...args], {
    stdout: (text) => void (stdout += text),
    stderr: (text) => void (stderr += text),
    env: key === undefined ? {} : { CONTACTS_API_KEY: key },
    stderrIsTTY,
  });
  return { code, stdout, stderr };
}

type Decision = 'forward' | 'hang' | { status: number; body: unknown; headers?: Record<string, string> };

/** An HTTP server in front of `target` that decides per request (numbered from 1) to forward, answer itself, or hang. */
async function startProxy(target: string, decide: (request: number) => Promise<Decision> | Decision) {
  let requests = 0;
  const answer = async (req: IncomingMessage, res: ServerResponse) => {
    const decision = await decide(++requests);
    if (decision === 'hang') return;
    if (decision === 'forward') {
      const upstream = await fetch(`${target}${req.url}`, { headers: { authorization: req.headers.authorization ?? '' } });
      res.writeHead(upstream.status, { 'content-type': 'application/json' }).end(await upstream.text());
      return;
    }
    res.writeHead(decision.status, { 'content-type': 'application/json', ...decision.headers }).end(JSON.stringify(decision.body));
  };
  const server = createServer((req, res) => void answer(req, res));
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    requests: () => requests,
    close: async () => {
      server.closeAllConnections();
      server.close();
      await once(server, 'close');
    },
  };
}

async function allContacts(store: Store, ownerId: string): Promise<Contact[]> {
  const contacts: Contact[] = [];
  for (let offset = 0; ; offset += 100) {
    const page = await store.contacts.listPage(ownerId, { limit: 100, offset });
    contacts.push(...(page.contacts as Contact[]));
    if (contacts.length >= page.total) return contacts;
  }
}

/** The fields a vCard carries, as `contacts import` would store them (an empty tag list reads back as none). */
function vcardFields(contact: Contact) {
  const { id, name, email, phone, company, title, location, description, birthday, linkedin_url } = contact;
  const tags = contact.tags?.length ? contact.tags : null;
  return { id, name, email, phone, company, title, location, description, birthday, linkedin_url, tags };
}

const outDir = () => mkdtempSync(join(tmpdir(), 'contacts-export-'));
const oneLine = (text: string) => text.endsWith('\n') && !text.slice(0, -1).includes('\n') && !text.includes('\r');

describeEachBackend('contacts-api export', (db) => {
  let source: Served;
  let expected: Contact[];
  const seconds: { dispose: () => Promise<void>; served: Served }[] = [];

  /** A second server on its own database: the exported ids belong to the first user, so no other user of db() may import them. */
  async function secondServer(): Promise<Served> {
    const { database, dispose } = await createTestDatabase(db().backend);
    const served = await serve(database);
    seconds.push({ dispose, served });
    return served;
  }

  beforeAll(async () => {
    source = await serve(db());
    const generated = generateDemoContacts(240, 7, new Date('2025-01-01T00:00:00.000Z'));
    const awkward = AWKWARD.map((fields, i) => ({ label: `awkward ${i + 1}`, contact: normalizeContactInput(fields) }));
    await db().store.contacts.importContacts(source.userId, [...awkward, ...generated]);
    expected = await allContacts(db().store, source.userId);
    expect(expected).toHaveLength(242);
  });
  afterAll(async () => {
    await source?.app.close();
    for (const { served, dispose } of seconds) {
      await served.app.close();
      await dispose();
    }
  });

  it('writes ndjson to stdout by default: every contact as the API returns it, in list order', async () => {
    const result = await exportCli(source.key, ['--base-url', source.url]);
    expect(result.code, result.stderr).toBe(0);
    expect(
      result.stdout
        .trimEnd()
        .split('\n')
        .map((line) => JSON.parse(line)),
    ).toEqual(expected);
    expect(result.stderr).toMatch(/^Exported 242 contacts as ndjson to stdout in \d+\.\ds\n$/);
  });

  it('writes each format to --out, each readable by `contacts import`, with one summary line on stderr', async () => {
    const dir = outDir();
    for (const format of ['ndjson', 'json', 'csv', 'vcf']) {
      const out = join(dir, `contacts.${format}`);
      const result = await exportCli(source.key, ['--base-url', source.url, '--format', format, '--out', out]);
      expect(result.code, result.stderr).toBe(0);
      expect(result.stdout).toBe('');
      expect(oneLine(result.stderr), result.stderr).toBe(true);
      expect(result.stderr).toContain(`Exported 242 contacts as ${format} to ${out}`);
      const { records } = await readWholeFile(out);
      expect(records.map((record) => record.contact.id)).toEqual(expected.map((contact) => contact.id));
    }
    expect(JSON.parse(await readFile(join(dir, 'contacts.json'), 'utf8'))).toEqual(expected);
    expect((await readdir(dir)).sort()).toEqual(['contacts.csv', 'contacts.json', 'contacts.ndjson', 'contacts.vcf']);
  });

  it('CSV round-trips: export → `contacts import` into another user → export gives the same file, every field', async () => {
    const dir = outDir();
    const first = join(dir, 'first.csv');
    const second = join(dir, 'second.csv');
    expect((await exportCli(source.key, ['--base-url', source.url, '--format', 'csv', '--out', first])).code).toBe(0);
    const target = await secondServer();
    expect(await cliJson(target.database.databaseUrl, 'contacts', 'import', '--user', target.userId, first)).toMatchObject({
      imported: 242,
      created: 242,
      not_imported: [],
    });
    expect((await exportCli(target.key, ['--base-url', target.url, '--format', 'csv', '--out', second])).code).toBe(0);
    expect(await readFile(second, 'utf8')).toBe(await readFile(first, 'utf8'));
    const imported = await allContacts(target.database.store, target.userId);
    expect(imported).toEqual(expected);
  });

  it('vCard round-trips: export → `contacts import` into another user → export gives the same contacts in the fields vCard carries', async () => {
    const dir = outDir();
    const first = join(dir, 'first.vcf');
    const second = join(dir, 'second.vcf');
    expect((await exportCli(source.key, ['--base-url', source.url, '--format', 'vcf', '--out', first])).code).toBe(0);
    const target = await secondServer();
    expect(await cliJson(target.database.databaseUrl, 'contacts', 'import', '--user', target.userId, first)).toMatchObject({
      imported: 242,
      created: 242,
      not_imported: [],
    });
    expect((await exportCli(target.key, ['--base-url', target.url, '--format', 'vcf', '--out', second])).code).toBe(0);

    const byId = (records: { fields: Record<string, unknown> }[]) =>
      Object.fromEntries(records.map(({ fields }) => [fields.id as string, fields]));
    const firstCards = byId(await readAll(readVcardRecords, await readFile(first, 'utf8')));
    expect(byId(await readAll(readVcardRecords, await readFile(second, 'utf8')))).toEqual(firstCards);
    expect(Object.keys(firstCards)).toHaveLength(242);
    const imported = await allContacts(target.database.store, target.userId);
    const sortById = (contacts: Contact[]) => contacts.map(vcardFields).sort((a, b) => a.id.localeCompare(b.id));
    expect(sortById(imported)).toEqual(sortById(expected));
  });

  it('a key revoked mid-export: exits non-zero with one line, and --out is neither created nor replaced', async () => {
    const user = await createUser(db().store);
    await db().store.contacts.importContacts(user.id, generateDemoContacts(250, 11, new Date('2025-01-01T00:00:00.000Z')));
    const { id: keyId, key } = await createKey(db().store, user.id);
    const proxy = await startProxy(source.url, async (request): Promise<Decision> => {
      if (request === 2) await db().store.keys.revoke(keyId);
      return 'forward';
    });
    try {
      const dir = outDir();
      const fresh = join(dir, 'fresh.csv');
      const kept = join(dir, 'kept.csv');
      await writeFile(kept, 'the previous export\n');
      for (const out of [fresh, kept]) {
        const result = await exportCli(key, ['--base-url', proxy.url, '--format', 'csv', '--out', out]);
        expect(result.code).toBe(1);
        expect(oneLine(result.stderr), result.stderr).toBe(true);
        expect(result.stderr).toBe(`error: export failed: Invalid or inactive API key (HTTP 401) (${out} not written)\n`);
      }
      expect(existsSync(fresh)).toBe(false);
      expect(await readFile(kept, 'utf8')).toBe('the previous export\n');
      expect(await readdir(dir)).toEqual(['kept.csv']);
    } finally {
      await proxy.close();
    }
  });

  it('a server failing with 500 after the first page: retried, then exits non-zero with one line and leaves no file', async () => {
    const proxy = await startProxy(source.url, (request) =>
      request === 1 ? 'forward' : { status: 500, body: { error: 'Internal server error' }, headers: { 'retry-after': '0' } },
    );
    try {
      const dir = outDir();
      const out = join(dir, 'contacts.vcf');
      const result = await exportCli(source.key, ['--base-url', proxy.url, '--format', 'vcf', '--out', out]);
      expect(result.code).toBe(1);
      expect(result.stderr).toBe(`error: export failed: Internal server error (HTTP 500) (${out} not written)\n`);
      expect(proxy.requests()).toBe(1 + 5);
      expect(await readdir(dir)).toEqual([]);
    } finally {
      await proxy.close();
    }
  });

  it('a 429 mid-export is waited out as its Retry-After says, and the export completes', async () => {
    const proxy = await startProxy(source.url, (request) =>
      request === 2 ? { status: 429, body: { error: 'Rate limit exceeded' }, headers: { 'retry-after': '0' } } : 'forward',
    );
    try {
      const out = join(outDir(), 'contacts.ndjson');
      const result = await exportCli(source.key, ['--base-url', proxy.url, '--out', out]);
      expect(result.code, result.stderr).toBe(0);
      expect(
        (await readFile(out, 'utf8'))
          .trimEnd()
          .split('\n')
          .map((line) => JSON.parse(line)),
      ).toEqual(expected);
      // Three pages of up to 100 rows overlapping by 5, and the one refused request again.
      expect(proxy.requests()).toBe(4);
    } finally {
      await proxy.close();
    }
  });

  it('without CONTACTS_API_KEY, or with a bad --base-url or --format, exits non-zero with one line', async () => {
    const missing = await exportCli(undefined, ['--base-url', source.url]);
    expect(missing).toEqual({ code: 1, stdout: '', stderr: 'error: CONTACTS_API_KEY is not set; export sends it to the API as the key\n' });
    const badUrl = await exportCli(source.key, ['--base-url', 'localhost:3000']);
    expect(badUrl.code).toBe(1);
    expect(badUrl.stderr).toBe('error: --base-url must be an http or https URL such as http://127.0.0.1:3000; got "localhost:3000"\n');
    const badFormat = await exportCli(source.key, ['--base-url', source.url, '--format', 'xml']);
    expect(badFormat.code).not.toBe(0);
    expect(badFormat.stderr).toMatch(/argument 'xml' is invalid\. Allowed choices are ndjson, json, csv, vcf/);
  });

  it('draws a progress bar on stderr when it is a terminal', async () => {
    const result = await exportCli(source.key, ['--base-url', source.url, '--format', 'json', '--out', join(outDir(), 'c.json')], true);
    expect(result.code).toBe(0);
    expect(result.stderr).toContain('\r[');
    expect(result.stderr).toContain('242/242  100%');
    expect(result.stderr).toMatch(/\nExported 242 contacts as json to .* in \d+\.\ds\n$/);
  });

  it('as a separate process whose stderr is a pipe: no progress output, only the summary line', async () => {
    const out = join(outDir(), 'contacts.ndjson');
    const result = await runBin({ CONTACTS_API_KEY: source.key }, 'export', '--base-url', source.url, '--out', out);
    expect(result.code, result.stderr).toBe(0);
    expect(result.stderr).toMatch(/^Exported 242 contacts as ndjson to .* in \d+\.\ds\n$/);
    expect((await readFile(out, 'utf8')).trimEnd().split('\n')).toHaveLength(242);
  });

  it('SIGINT during the export stops it, exits non-zero and leaves neither the file nor its temporary file', async () => {
    let secondRequest: () => void;
    const reachedSecond = new Promise<void>((resolve) => (secondRequest = resolve));
    const proxy = await startProxy(source.url, (request) => {
      if (request === 1) return 'forward';
      secondRequest();
      return 'hang';
    });
    try {
      const dir = outDir();
      const out = join(dir, 'contacts.csv');
      const child = spawn(process.execPath, [BIN, 'export', '--base-url', proxy.url, '--format', 'csv', '--out', out], {
        env: { ...process.env, CONTACTS_API_KEY: source.key },
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      let stderr = '';
      child.stderr.on('data', (chunk: Buffer) => void (stderr += chunk.toString()));
      const exited = once(child, 'exit');
      await reachedSecond;
      child.kill('SIGINT');
      const [code] = await exited;
      expect(code).toBe(1);
      expect(stderr).toBe(`error: export failed: interrupted by SIGINT (${out} not written)\n`);
      expect(await readdir(dir)).toEqual([]);
    } finally {
      await proxy.close();
    }
  });
});
