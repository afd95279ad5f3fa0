import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { afterAll, beforeAll, expect, it, vi } from 'vitest';
import { describeEachBackend } from '../support/backends.js';
import { BIN, runBin, writeTempFile } from '../support/cli.js';

/** How long `vi.waitFor` polls for a change made with the CLI: the visibility bound. */
const WITHIN_ONE_SECOND = { timeout: 1000, interval: 25 };

describeEachBackend('contacts-api demo and serve, as separate processes', (db) => {
  let server: ChildProcess;
  let exited: Promise<unknown[]>;
  let baseUrl: string;
  let demo: { user: string; key: string; key_id: string; contacts: number; curl: string };
  const env = () => ({ DATABASE_URL: db().databaseUrl, API_KEY_PREFIX: 'cnt', LOG_LEVEL: 'warn', WORKERS: '1' });
  const list = (key: string, query = '') => fetch(`${baseUrl}/api/v1/contacts${query}`, { headers: { authorization: `Bearer ${key}` } });

  beforeAll(async () => {
    const result = await runBin({ ...env(), PORT: '4567' }, 'demo', '--json');
    expect(result.code, result.stderr).toBe(0);
    demo = JSON.parse(result.stdout);
    server = spawn(process.execPath, [BIN, 'serve', '--port', '0'], {
      env: { ...process.env, ...env() },
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    exited = once(server, 'exit');
    let stderr = '';
    baseUrl = await new Promise<string>((resolve, reject) => {
      server.stderr!.on('data', (chunk: Buffer) => {
        stderr += chunk.toString();
        if (process.env.DEBUG_SERVE) process.stdout.write(chunk);
        const match = /listening on (http:\/\/\S+)/.exec(stderr);
        if (match) resolve(match[1]!);
      });
      server.once('exit', (code) => reject(new Error(`serve exited with ${code}: ${stderr}`)));
    });
  });
  afterAll(async () => {
    if (server && server.exitCode === null) {
      server.kill('SIGKILL');
      await exited;
    }
  });

  it('demo creates a Pro user with a few hundred contacts, merged duplicates, a key and a curl line', async () => {
    expect(demo.user).toBe('demo@example.com');
    expect(demo.contacts).toBe(300);
    expect(demo.key).toMatch(/^cnt_live_[0-9A-Za-z]{36}$/);
    expect(demo.curl).toBe(`curl -s -H "Authorization: Bearer ${demo.key}" "http://127.0.0.1:4567/api/v1/contacts?limit=2"`);
    const response = await list(demo.key, '?limit=100&offset=250');
    expect(response.status).toBe(200);
    const body = (await response.json()) as any;
    expect(body.pagination).toEqual({ limit: 100, offset: 250, total: 300, nextOffset: null });
    expect(body.data).toHaveLength(50);
  });

  it('demo run again keeps the same contacts, prints a new working key and revokes the one it replaces', async () => {
    const again = JSON.parse((await runBin(env(), 'demo', '--json')).stdout);
    expect(again.contacts).toBe(300);
    expect(again.key).not.toBe(demo.key);
    expect(again.revoked_keys).toEqual([demo.key_id]);
    expect((await list(again.key)).status).toBe(200);
    await vi.waitFor(async () => expect((await list(demo.key)).status).toBe(401), WITHIN_ONE_SECOND);

    const third = await runBin(env(), 'demo');
    expect(third.stdout).toContain(`Revoked the previous demo key ${again.key_id}: one demo key is active at a time.`);
    const { keys } = JSON.parse((await runBin(env(), 'keys', 'list', '--user', demo.user, '--json')).stdout);
    expect(keys.map((key: { status: string }) => key.status)).toEqual(['revoked', 'revoked', 'active']);
  });

  it('sees revocation, plan changes, merges and imports made with the CLI within one second', async () => {
    const user = JSON.parse(
      (await runBin(env(), 'users', 'create', '--email', `live-${Date.now()}@example.com`, '--plan', 'pro', '--json')).stdout,
    );
    const key = JSON.parse((await runBin(env(), 'keys', 'create', '--user', user.id, '--json')).stdout);
    const file = writeTempFile('live.json', JSON.stringify([{ name: 'One' }, { name: 'Two' }]));
    await runBin(env(), 'contacts', 'import', '--user', user.id, file);
    await vi.waitFor(async () => expect(((await (await list(key.key)).json()) as any).pagination.total).toBe(2), WITHIN_ONE_SECOND);

    const ids = ((await (await list(key.key)).json()) as any).data.map((c: { id: string }) => c.id);
    expect((await runBin(env(), 'contacts', 'merge', '--user', user.id, ids[1], '--into', ids[0])).code).toBe(0);
    await vi.waitFor(async () => expect(((await (await list(key.key)).json()) as any).pagination.total).toBe(1), WITHIN_ONE_SECOND);

    expect((await runBin(env(), 'users', 'set-plan', '--user', user.id, '--plan', 'free')).code).toBe(0);
    await vi.waitFor(async () => {
      const response = await list(key.key);
      expect(response.status).toBe(403);
      expect(await response.json()).toEqual({ error: 'API access requires a Pro plan' });
    }, WITHIN_ONE_SECOND);
    await runBin(env(), 'users', 'set-plan', '--user', user.id, '--plan', 'pro');
    await vi.waitFor(async () => expect((await list(key.key)).status).toBe(200), WITHIN_ONE_SECOND);

    expect((await runBin(env(), 'keys', 'revoke', key.id)).code).toBe(0);
    await vi.waitFor(async () => {
      const response = await list(key.key);
      expect(response.status).toBe(401);
      expect(response.headers.get('www-authenticate')).toBe('Bearer realm="contacts-api"');
    }, WITHIN_ONE_SECOND);
  });

  it('stops cleanly on SIGTERM', async () => {
    expect(server.exitCode).toBeNull();
    server.kill('SIGTERM');
    const [code] = await exited;
    expect(code).toBe(0);
  });
});
