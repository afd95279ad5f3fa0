import { randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Command } from 'commander';
import { afterAll, describe, expect, inject, it } from 'vitest';
import { createProgram } from '../../src/cli/program.js';
import { withAdmin } from '../support/backends.js';
import { runBin, type CliResult } from '../support/cli.js';
import { useTempFiles } from '../support/temp-files.js';

const ID = '0190b7a4-3c2e-7f00-8000-00000000002a';
const OTHER_ID = '0190b7a4-3c2e-7f00-8000-00000000002b';
/** Commands that create a missing database; every other command opens an existing one only. */
const CREATING = ['migrate', 'demo'];
/** Talks to a running API, never to a database. */
const NO_DATABASE = ['export'];

/** Every command of the program, as typed (`keys revoke`), subcommands for a group. */
function commandNames(command: Command, prefix = ''): string[] {
  return command.commands
    .filter((sub) => sub.name() !== 'help')
    .flatMap((sub) => (sub.commands.length > 0 ? commandNames(sub, `${prefix}${sub.name()} `) : [`${prefix}${sub.name()}`]));
}

const writeFile = useTempFiles();

/** Each command that opens the database, with arguments it would otherwise take; the files it reads exist. */
async function commandsOnTheDatabase(): Promise<Record<string, string[]>> {
  const contacts = await writeFile('contacts.ndjson', '{"name":"Ada"}\n');
  const owned = await writeFile('owned.ndjson', '{"owner":"ada@example.com","name":"Ada"}\n');
  return {
    serve: ['serve', '--port', '0', '--workers', '1'],
    'users create': ['users', 'create', '--email', 'ada@example.com'],
    'users set-plan': ['users', 'set-plan', '--user', 'ada@example.com', '--plan', 'pro'],
    'users list': ['users', 'list'],
    'keys create': ['keys', 'create', '--user', 'ada@example.com'],
    'keys list': ['keys', 'list', '--user', 'ada@example.com'],
    'keys revoke': ['keys', 'revoke', ID],
    'contacts import': ['contacts', 'import', '--user', 'ada@example.com', contacts],
    'contacts merge': ['contacts', 'merge', '--user', 'ada@example.com', '--into', ID, OTHER_ID],
    'contacts delete': ['contacts', 'delete', '--user', 'ada@example.com', ID],
    'bulk-import': ['bulk-import', '--contacts', owned],
    mcp: ['mcp'],
  };
}

/** Runs every command as its own process on DATABASE_URL, all at once: what each printed and its exit code. */
async function runEach(databaseUrl: string, commands: Record<string, string[]>): Promise<Record<string, CliResult>> {
  const env = { DATABASE_URL: databaseUrl, CONTACTS_API_KEY: 'cnt_live_x', LOG_LEVEL: 'warn' };
  const results = await Promise.all(Object.entries(commands).map(async ([name, args]) => [name, await runBin(env, ...args)] as const));
  return Object.fromEntries(results);
}

/** The answer every command gives: the one line `serve` gives, exit code 1, nothing on stdout. */
function everyOneFailsWith(commands: Record<string, string[]>, message: string): Record<string, CliResult> {
  return Object.fromEntries(Object.keys(commands).map((name) => [name, { code: 1, stdout: '', stderr: `error: ${message}\n` }]));
}

/**
 * What `serve` may take to fail at most, from starting node: before it announced its workers and forked them, it
 * already failed in under a second; the bound leaves room for a loaded machine.
 */
const SERVE_FAILS_WITHIN_MS = 15_000;

describe('a command on a database that does not exist', () => {
  const folder = mkdtempSync(join(tmpdir(), 'contacts-missing-'));
  afterAll(() => rmSync(folder, { recursive: true, force: true }));
  const postgresAdminUrl = inject('postgresAdminUrl');
  /** A database the PostgreSQL server does not have, and the message naming it. */
  const missingPostgres = () => {
    const name = `contacts_missing_${randomBytes(6).toString('hex')}`;
    const url = new URL(postgresAdminUrl!);
    url.pathname = `/${name}`;
    const message = `No database "${name}" on ${url.host}: create it (\`createdb ${name}\`) and run \`contacts-read-api migrate\`, or set DATABASE_URL`;
    return { name, url: url.toString(), message };
  };
  const postgresHas = async (name: string) =>
    (await withAdmin(postgresAdminUrl!, (admin) => admin.query('SELECT 1 FROM pg_database WHERE datname = $1', [name]))).rowCount !== 0;

  it('covers every command of the program: each opens an existing database only, but migrate and demo', async () => {
    const covered = [...Object.keys(await commandsOnTheDatabase()), ...CREATING, ...NO_DATABASE];
    expect(commandNames(createProgram({ stdout: () => {}, stderr: () => {}, env: {} })).sort()).toEqual(covered.sort());
  });

  it('SQLite: fails with the message serve gives, exit 1, and creates neither the file nor its folder', async () => {
    const path = join(folder, 'mistyped', 'contacts.db');
    const commands = await commandsOnTheDatabase();
    const message = `No database at ${path}: create it with \`contacts-read-api migrate\` (or \`demo\`), or set DATABASE_URL`;
    expect(await runEach(`file:${path}`, commands)).toEqual(everyOneFailsWith(commands, message));
    expect(existsSync(join(folder, 'mistyped'))).toBe(false);
  }, 120_000);

  it.runIf(postgresAdminUrl !== null)(
    'PostgreSQL: fails with a message of the same kind, migrate and demo too, and creates no database',
    async () => {
      const { name, url, message } = missingPostgres();
      // The message is made where every connection is, once: a few commands stand for the rest.
      const { serve, 'users list': list, 'contacts import': contactsImport, mcp } = await commandsOnTheDatabase();
      const commands = {
        serve: serve!,
        'users list': list!,
        'contacts import': contactsImport!,
        mcp: mcp!,
        migrate: ['migrate'],
        demo: ['demo'],
      };
      expect(await runEach(url, commands)).toEqual(everyOneFailsWith(commands, message));
      expect(await postgresHas(name)).toBe(false);
    },
    120_000,
  );

  it('serve with workers says nothing of them, and exits 1 at once, with the one line', async () => {
    const path = join(folder, 'cluster', 'contacts.db');
    const targets = [
      {
        url: `file:${path}`,
        message: `No database at ${path}: create it with \`contacts-read-api migrate\` (or \`demo\`), or set DATABASE_URL`,
      },
      ...(postgresAdminUrl === null ? [] : [missingPostgres()]),
    ];
    await Promise.all(
      targets.map(async ({ url, message }) => {
        const started = performance.now();
        const result = await runBin({ DATABASE_URL: url, LOG_LEVEL: 'warn' }, 'serve', '--port', '0', '--workers', '2');
        expect(performance.now() - started).toBeLessThan(SERVE_FAILS_WITHIN_MS);
        expect(result).toEqual({ code: 1, stdout: '', stderr: `error: ${message}\n` });
      }),
    );
    expect(existsSync(join(folder, 'cluster'))).toBe(false);
  }, 60_000);
});
