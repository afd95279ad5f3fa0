import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { isWellFormedApiKey } from '../../src/domain/api-key.js';
import { describeEachBackend } from '../support/backends.js';
import { cli, cliJson } from '../support/cli.js';

describeEachBackend('contacts-api users, keys and migrate', (db) => {
  const url = () => db().databaseUrl;
  let sequence = 0;
  const email = () => `cli-${++sequence}-${Date.now()}@example.com`;

  describe('migrate', () => {
    it('reports nothing to apply on an up-to-date database', async () => {
      expect(await cliJson(url(), 'migrate')).toEqual({ applied: [] });
      expect((await cli(url(), 'migrate')).stdout).toBe('Database is up to date\n');
    });
  });

  describe('users create', () => {
    it('prints exactly {id, email, name, plan}, free by default', async () => {
      const address = email();
      const user = await cliJson(url(), 'users', 'create', '--email', address, '--name', 'Ada Lovelace');
      expect(user).toEqual({ id: expect.stringMatching(/^[0-9a-f-]{36}$/), email: address, name: 'Ada Lovelace', plan: 'free' });
      expect(await cliJson(url(), 'users', 'create', '--email', email(), '--plan', 'pro')).toMatchObject({ name: null, plan: 'pro' });
    });

    it.each([
      [['--email', 'not-an-email'], /--email must be an email address/],
      [['--email', 'x@example.com', '--plan', 'gold'], /Unknown plan "gold"/],
      [[], /required option '--email <email>' not specified/],
    ])('refuses %j with a one-line message and a non-zero exit', async (args, message) => {
      const result = await cli(url(), 'users', 'create', ...args);
      expect(result.code).not.toBe(0);
      expect(result.stderr).toMatch(message);
      expect(result.stderr.trim().split('\n')[0]).toMatch(message);
      expect(result.stdout).toBe('');
    });

    it('refuses a second user with the same email, in any case', async () => {
      const address = email();
      await cliJson(url(), 'users', 'create', '--email', address);
      const result = await cli(url(), 'users', 'create', '--email', address.toUpperCase());
      expect(result).toMatchObject({ code: 1, stdout: '' });
      expect(result.stderr).toBe(`error: A user with email ${address.toUpperCase()} already exists\n`);
    });
  });

  describe('users set-plan', () => {
    it('prints the user on the new plan', async () => {
      const user = await cliJson(url(), 'users', 'create', '--email', email());
      expect(await cliJson(url(), 'users', 'set-plan', '--user', user.email, '--plan', 'pro')).toEqual({ ...user, plan: 'pro' });
      expect((await cli(url(), 'users', 'set-plan', '--user', user.id, '--plan', 'free')).stdout).toBe(
        `User ${user.email} is now on the free plan\n`,
      );
    });

    it('refuses an unknown user', async () => {
      const result = await cli(url(), 'users', 'set-plan', '--user', 'nobody@example.com', '--plan', 'pro');
      expect(result.code).toBe(1);
      expect(result.stderr).toBe('error: No user with email or id "nobody@example.com"\n');
    });
  });

  describe('users list', () => {
    it('prints a page of users with their creation times and key counts, and in words where the next page starts', async () => {
      const before = (await cliJson(url(), 'users', 'list')).total as number;
      const first = await cliJson(url(), 'users', 'create', '--email', email(), '--name', 'First', '--plan', 'pro');
      const second = await cliJson(url(), 'users', 'create', '--email', email());
      await cliJson(url(), 'keys', 'create', '--user', first.id);

      const listed = await cliJson(url(), 'users', 'list', '--offset', String(before));
      expect(listed).toEqual({
        users: [
          { ...first, created_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/), keys: 1 },
          { ...second, created_at: expect.any(String), keys: 0 },
        ],
        total: before + 2,
      });

      const human = await cli(url(), 'users', 'list', '--offset', String(before), '--limit', '1');
      expect(human.stdout).toBe(
        `${first.id}  ${first.email}  First  pro  created=${listed.users[0].created_at}  1 key\n` +
          `Users ${before + 1}-${before + 1} of ${before + 2} (--offset ${before + 1} for more)\n`,
      );
    });

    it.each([
      [['--limit', '0'], 'error: --limit must be an integer from 1 to 10000; got "0"\n'],
      [['--offset', '-1'], 'error: --offset must be an integer from 0 to 2147483647; got "-1"\n'],
    ])('refuses %j', async (args, message) => {
      expect(await cli(url(), 'users', 'list', ...args)).toEqual({ code: 1, stdout: '', stderr: message });
    });
  });

  describe('keys', () => {
    it('create prints {id, key, scopes, expires_at} once: a key of API_KEY_PREFIX, contacts:read, never expiring', async () => {
      const user = await cliJson(url(), 'users', 'create', '--email', email(), '--plan', 'pro');
      const created = await cliJson(url(), 'keys', 'create', '--user', user.email, '--label', 'laptop');
      expect(Object.keys(created).sort()).toEqual(['expires_at', 'id', 'key', 'scopes']);
      expect(created.scopes).toEqual(['contacts:read']);
      expect(created.expires_at).toBeNull();
      expect(isWellFormedApiKey(created.key, 'cnt')).toBe(true);
    });

    it('create prints the key in words, and a note on stderr when the user’s plan refuses keys', async () => {
      const user = await cliJson(url(), 'users', 'create', '--email', email());
      const result = await cli(url(), 'keys', 'create', '--user', user.id, '--scopes', '');
      expect(result.code).toBe(0);
      expect(result.stdout).toMatch(
        /^Created key [0-9a-f-]{36}\nScopes: \(none\)\nKey \(shown only now; store it safely\): cnt_live_\w+\n$/,
      );
      expect(result.stderr).toBe('note: this user is on the free plan; the key is refused (403) until the user is on pro\n');
    });

    it('create --scopes "" makes a key with no scope', async () => {
      const user = await cliJson(url(), 'users', 'create', '--email', email(), '--plan', 'pro');
      const created = await cliJson(url(), 'keys', 'create', '--user', user.id, '--scopes', '');
      expect(created.scopes).toEqual([]);
    });

    it('create --expires-in sets expires_at that far ahead', async () => {
      const user = await cliJson(url(), 'users', 'create', '--email', email(), '--plan', 'pro');
      const before = Date.now();
      const created = await cliJson(url(), 'keys', 'create', '--user', user.id, '--expires-in', '12h');
      const expiresAt = Date.parse(created.expires_at);
      expect(expiresAt).toBeGreaterThanOrEqual(before + 43_200_000);
      expect(expiresAt).toBeLessThanOrEqual(Date.now() + 43_200_000);
    });

    it.each([
      [['--expires-in', '10y'], /Invalid duration "10y"/],
      [['--expires-in', '0d'], /Invalid duration "0d"/],
      [['--scopes', 'contacts:write'], /Unknown scope "contacts:write"/],
    ])('create refuses %j', async (args, message) => {
      const user = await cliJson(url(), 'users', 'create', '--email', email(), '--plan', 'pro');
      const result = await cli(url(), 'keys', 'create', '--user', user.id, ...args);
      expect(result.code).toBe(1);
      expect(result.stderr).toMatch(message);
      expect(await cliJson(url(), 'keys', 'list', '--user', user.id)).toEqual({ keys: [] });
    });

    it('list prints each key with its status, as JSON or one line each, and never a secret', async () => {
      const user = await cliJson(url(), 'users', 'create', '--email', email(), '--plan', 'pro');
      const created = await cliJson(url(), 'keys', 'create', '--user', user.id, '--label', 'one');
      const json = await cli(url(), 'keys', 'list', '--user', user.email, '--json');
      const human = await cli(url(), 'keys', 'list', '--user', user.email);
      for (const { stdout } of [json, human]) {
        expect(stdout).not.toContain(created.key.slice(9));
        expect(stdout).not.toMatch(/hash/);
      }
      const { keys } = JSON.parse(json.stdout);
      expect(keys).toEqual([
        {
          id: created.id,
          owner_id: user.id,
          label: 'one',
          start: `${created.key.slice(0, 13)}…${created.key.slice(-4)}`,
          scopes: ['contacts:read'],
          created_at: expect.any(String),
          expires_at: null,
          last_used_at: null,
          revoked_at: null,
          status: 'active',
        },
      ]);
      expect(human.stdout).toBe(
        `${created.id}  active  one  scopes=contacts:read  created=${keys[0].created_at}  expires=never  last_used=never\n`,
      );
    });

    it('revoke prints the key’s id and revocation time', async () => {
      const user = await cliJson(url(), 'users', 'create', '--email', email(), '--plan', 'pro');
      const created = await cliJson(url(), 'keys', 'create', '--user', user.id);
      const revoked = await cliJson(url(), 'keys', 'revoke', created.id);
      expect(revoked).toEqual({ id: created.id, revoked_at: expect.stringMatching(/Z$/) });
      expect((await cli(url(), 'keys', 'revoke', created.id)).stdout).toBe(`Revoked key ${created.id} at ${revoked.revoked_at}\n`);
    });

    it('revoke refuses an unknown key id', async () => {
      for (const id of ['00000000-0000-4000-8000-000000000000', 'nope']) {
        const result = await cli(url(), 'keys', 'revoke', id);
        expect(result.code).toBe(1);
        expect(result.stderr).toBe(`error: No key with id "${id}"\n`);
      }
    });
  });
});

describe('contacts-api help and version', () => {
  it('--help marks the options a command cannot run without', async () => {
    const help = await cli('file::memory:', 'keys', 'create', '--help');
    expect(help.code).toBe(0);
    expect(help.stdout).toMatch(/--user <email\|id>\s+the key’s owner \(required\)\n/);
    expect(help.stdout).toMatch(/--label <label>\s+what the key is for\n/);
    expect((await cli('file::memory:', 'users', 'set-plan', '--help')).stdout.match(/\(required\)/g)).toHaveLength(2);
  });

  it('--version prints the package’s version', async () => {
    const { version } = JSON.parse(readFileSync('package.json', 'utf8')) as { version: string };
    expect(await cli('file::memory:', '--version')).toEqual({ code: 0, stdout: `${version}\n`, stderr: '' });
  });
});

describe('contacts-api usage errors', () => {
  it('an unknown command exits non-zero with a message', async () => {
    const result = await cli('file::memory:', 'frobnicate');
    expect(result.code).not.toBe(0);
    expect(result.stderr).toMatch(/unknown command 'frobnicate'/);
  });

  it('a bad DATABASE_URL names the variable', async () => {
    const result = await cli('mysql://localhost/x', 'migrate');
    expect(result.code).toBe(1);
    expect(result.stderr).toBe('error: DATABASE_URL must be file:PATH, postgres://… or postgresql://…\n');
  });
});
