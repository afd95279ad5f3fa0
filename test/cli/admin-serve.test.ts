import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { createServer, type Server } from 'node:net';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { createTestDatabase, describeEachBackend, type TestDatabase } from '../support/backends.js';
import { BIN } from '../support/cli.js';
import { freePort } from '../support/listen.js';
import { startServerProcess, type ServerProcess } from '../support/server-process.js';

const ADMIN_TOKEN = 'cluster-admin-token-0123456789-abcdefghij';
/** Every worker must see a change within this long of the admin call that made it. */
const PROPAGATION_BOUND_MS = 1_000;
/** How long past the bound requests go on, so that each worker answers several of them. */
const OBSERVED_PAST_BOUND_MS = 500;

/** The admin API of a real `serve --workers 2`: a change it makes reaches every worker of the public API within a second. */
describeEachBackend('the admin API in a real cluster (serve --workers 2)', (db) => {
  let server: ServerProcess;
  let adminUrl: string;

  beforeAll(async () => {
    server = await startServerProcess({
      DATABASE_URL: db().databaseUrl,
      WORKERS: '2',
      RATE_LIMIT_PER_MINUTE: '0',
      // The revocation test asks with a revoked key hundreds of times from one address.
      AUTH_FAILURES_PER_MINUTE: '0',
      LOG_LEVEL: 'info',
      ADMIN_TOKEN,
      // Workers of a cluster that listen on port 0 share one port, which each prints.
      ADMIN_PORT: '0',
    });
    await vi.waitFor(() => expect(server.output().match(/Admin API on (\S+)/g)).toHaveLength(2), { timeout: 20_000, interval: 25 });
    const urls = [...server.output().matchAll(/Admin API on (\S+)/g)].map((match) => match[1]!);
    expect(urls[0]).toBe(urls[1]);
    adminUrl = new URL(urls[0]!).origin;
  });
  afterAll(async () => {
    await server?.kill();
  });

  // A new connection per request, so the primary spreads them over both workers.
  const adminCall = async (method: string, path: string, body?: unknown) => {
    const response = await fetch(`${adminUrl}${path}`, {
      method,
      headers: {
        authorization: `Bearer ${ADMIN_TOKEN}`,
        connection: 'close',
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
      },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await response.text();
    return { status: response.status, json: text === '' ? undefined : JSON.parse(text) };
  };
  const publicStatus = async (key: string) => {
    const response = await fetch(`${server.url}/api/v1/contacts?limit=1`, {
      headers: { authorization: `Bearer ${key}`, connection: 'close' },
    });
    await response.arrayBuffer();
    return { status: response.status, requestId: response.headers.get('x-request-id')! };
  };
  /** Which worker answered each request, from the workers' own log lines. */
  const workersOf = async (requestIds: string[]) => {
    let pids = new Set<number>();
    await vi.waitFor(
      () => {
        const lines = server.logLines().filter((line) => line.msg === 'request completed' && requestIds.includes(line.reqId));
        expect(lines).toHaveLength(requestIds.length);
        pids = new Set(lines.map((line) => line.pid as number));
      },
      { timeout: 3_000, interval: 25 },
    );
    return pids;
  };

  /**
   * Makes the change, then asks the public API with the key, four at a time, until well past the bound: every answer
   * from PROPAGATION_BOUND_MS on, from both workers, is `expected`.
   */
  async function expectSeenWithinASecond(change: () => Promise<number>, key: string, expected: number): Promise<void> {
    expect(await change()).toBeLessThan(300);
    const changedAt = Date.now();
    const late: { status: number; requestId: string }[] = [];
    while (Date.now() - changedAt < PROPAGATION_BOUND_MS + OBSERVED_PAST_BOUND_MS) {
      const sentAt = Date.now();
      const answers = await Promise.all(Array.from({ length: 4 }, () => publicStatus(key)));
      if (sentAt - changedAt >= PROPAGATION_BOUND_MS) late.push(...answers);
    }
    expect(late.map((answer) => answer.status)).toEqual(late.map(() => expected));
    expect((await workersOf(late.map((answer) => answer.requestId))).size, 'both workers answered after the bound').toBe(2);
  }

  it('a plan downgrade gets the user’s key 403 on every worker within a second, an upgrade 200 again', async () => {
    const { json: user } = await adminCall('POST', '/admin/v1/users', { email: `cluster-${Date.now()}@example.com`, plan: 'pro' });
    const { json: key } = await adminCall('POST', `/admin/v1/users/${user.id}/keys`, {});
    expect((await publicStatus(key.key)).status).toBe(200);
    await expectSeenWithinASecond(
      async () => (await adminCall('PATCH', `/admin/v1/users/${user.id}`, { plan: 'free' })).status,
      key.key,
      403,
    );
    await expectSeenWithinASecond(
      async () => (await adminCall('PATCH', `/admin/v1/users/${user.id}`, { plan: 'pro' })).status,
      key.key,
      200,
    );
  });

  it('a revoked key gets 401 on every worker within a second, and so do a deleted user’s keys', async () => {
    const { json: user } = await adminCall('POST', '/admin/v1/users', { email: `cluster-revoke-${Date.now()}@example.com`, plan: 'pro' });
    const [{ json: revoked }, { json: kept }] = [
      await adminCall('POST', `/admin/v1/users/${user.id}/keys`, {}),
      await adminCall('POST', `/admin/v1/users/${user.id}/keys`, {}),
    ];
    for (const key of [revoked, kept]) expect((await publicStatus(key.key)).status).toBe(200);
    await expectSeenWithinASecond(async () => (await adminCall('DELETE', `/admin/v1/keys/${revoked.id}`)).status, revoked.key, 401);
    expect((await publicStatus(kept.key)).status).toBe(200);
    await expectSeenWithinASecond(async () => (await adminCall('DELETE', `/admin/v1/users/${user.id}`)).status, kept.key, 401);
  });

  it('every admin call is logged, by a worker, without the admin token or a key', async () => {
    // The two tests above made nine calls, spread over both workers.
    const calls = () => server.logLines().filter((line) => line.msg === 'admin call');
    await vi.waitFor(() => expect(calls()).toHaveLength(9), { timeout: 3_000, interval: 25 });
    expect(new Set(calls().map((line) => line.pid)).size).toBe(2);
    expect(calls().every((line) => line.status < 300 && typeof line.userId === 'string')).toBe(true);
    expect(server.stdout()).not.toContain(ADMIN_TOKEN);
    expect(server.stdout()).not.toMatch(/cnt_live_/);
  });
});

describe('serve with the admin API: start-up failures and shutdown (real processes)', () => {
  let database: TestDatabase;
  let dispose: () => Promise<void>;

  beforeAll(async () => {
    ({ database, dispose } = await createTestDatabase('sqlite'));
  });
  afterAll(async () => {
    await dispose?.();
  });

  /** Runs `serve` to its exit (killed after 5 s), returning its exit code and stderr. */
  async function serveUntilExit(env: Record<string, string>, workers: string) {
    const child = spawn(process.execPath, [BIN, 'serve', '--port', '0', '--workers', workers], {
      env: { ...process.env, DATABASE_URL: database.databaseUrl, LOG_LEVEL: 'warn', ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    const killer = setTimeout(() => child.kill('SIGKILL'), 5_000);
    const [code, signal] = (await once(child, 'close')) as [number | null, NodeJS.Signals | null];
    clearTimeout(killer);
    return { code, signal, stderr, output: output + stderr };
  }

  it('a taken admin port stops serve within 5 s with one line naming the admin address, with or without workers', async () => {
    const taken: Server = createServer();
    const port = await freePort();
    await new Promise<void>((resolve) => taken.listen(port, '127.0.0.1', resolve));
    try {
      for (const workers of ['2', '1']) {
        const { code, signal, stderr } = await serveUntilExit({ ADMIN_TOKEN, ADMIN_PORT: String(port) }, workers);
        expect({ workers, code, signal }).toEqual({ workers, code: 1, signal: null });
        expect(stderr.split('\n').filter((line) => line.includes('cannot listen'))).toEqual([
          `error: cannot listen on 127.0.0.1:${port}: the address is already in use`,
        ]);
      }
    } finally {
      taken.close();
    }
  });

  it('a short ADMIN_TOKEN stops serve at start with an error naming it, never the token', async () => {
    const token = 'short-admin-token';
    const { code, stderr, output } = await serveUntilExit({ ADMIN_TOKEN: token }, '1');
    expect(code).toBe(1);
    expect(stderr).toMatch(/^error: ADMIN_TOKEN must be 32–1024 visible ASCII characters/m);
    expect(output).not.toContain(token);
  });

  it('SIGTERM stops both listeners, a kept-alive admin connection included, and the process exits 0', async () => {
    const server = await startServerProcess({ DATABASE_URL: database.databaseUrl, ADMIN_TOKEN, ADMIN_PORT: '0', LOG_LEVEL: 'info' });
    try {
      await vi.waitFor(() => expect(server.output()).toMatch(/Admin API on (\S+)/), { timeout: 5_000, interval: 25 });
      const adminUrl = /Admin API on (\S+)/.exec(server.output())![1]!;
      const answer = await fetch(`${adminUrl}/openapi.json`, { headers: { authorization: `Bearer ${ADMIN_TOKEN}` } });
      expect(answer.status).toBe(200);
      await answer.arrayBuffer();
      const stoppedAt = Date.now();
      server.child.kill('SIGTERM');
      expect(await server.exited).toBe(0);
      expect(Date.now() - stoppedAt).toBeLessThan(3_000);
    } finally {
      await server.kill();
    }
  });
});
