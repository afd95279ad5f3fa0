import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { BODY_READ_TIMEOUT_MESSAGE } from '../../src/web/body-read-timeout.js';
import { loadConfig } from '../../src/config.js';
import { startAdminApp, TEST_ADMIN_TOKEN, type AdminTestServer } from '../support/admin-app.js';
import { buildTestApp } from '../support/app.js';
import { describeEachBackend } from '../support/backends.js';
import { basic } from '../support/dav.js';
import { listenOnFreePort } from '../support/listen.js';
import { captureLogs } from '../support/log-capture.js';
import { rawRequestSentSlowly } from '../support/raw-http.js';
import { createKey, createUser } from '../support/seed.js';

/** Small, so that each case takes a second or two; the bound is BODY_READ_TIMEOUT_MS plus the check's interval. */
const BODY_READ_TIMEOUT_MS = 1500;
/** What a loaded 2-core machine may add to the bound; far below what it was (a 503 at 10 s, a 408 at 60 s). */
const SLACK_MS = 2500;
/**
 * Below BODY_READ_TIMEOUT_MS, as the defaults are (10 s and 30 s): the time a body takes to arrive is the client's, so
 * it never turns into this bound's 503.
 */
const REQUEST_TIMEOUT_MS = 1000;
const DECLARED = 100;

/** One byte a second, more than the bound lasts: a trickle. */
const TRICKLE = { pieces: Array.from({ length: 10 }, () => '{'), gapMs: 1000 };
/** A few bytes, then nothing: a stall. */
const STALL = { pieces: ['{"na'], gapMs: 10 };

describeEachBackend('a request body that stalls or trickles gets 408 within BODY_READ_TIMEOUT_MS', (db) => {
  const adminLogs = captureLogs('info');
  const publicLogs = captureLogs('info');
  let admin: AdminTestServer;
  let app: FastifyInstance;
  let port = 0;
  let userId = '';
  let key = '';
  const contactCount = async (ownerId: string) => (await db().store.contacts.listPage(ownerId, { limit: 1, offset: 0 })).total;

  beforeAll(async () => {
    admin = await startAdminApp(db().store, {
      logger: adminLogs.logger,
      config: { bodyReadTimeoutMs: BODY_READ_TIMEOUT_MS, requestTimeoutMs: REQUEST_TIMEOUT_MS },
    });
    const oauth = loadConfig({ OAUTH_ISSUER: 'https://contacts.example.com' }).oauth;
    app = await buildTestApp(db().store, {
      logger: publicLogs.logger,
      config: { bodyReadTimeoutMs: BODY_READ_TIMEOUT_MS, requestTimeoutMs: REQUEST_TIMEOUT_MS, oauth },
    });
    ({ port } = await listenOnFreePort(app));
    const user = await createUser(db().store);
    userId = user.id;
    ({ key } = await createKey(db().store, user.id));
  });
  afterAll(async () => {
    await Promise.all([admin?.close(), app?.close()]);
  });

  /** Sends the head of a request declaring a DECLARED-byte body, then the body's pieces; the answer must be the 408. */
  const refusedInTime = async (
    toPort: number,
    [method, path, headers]: [string, string, Record<string, string>],
    { pieces, gapMs }: { pieces: string[]; gapMs: number },
  ) => {
    const head = [
      `${method} ${path} HTTP/1.1`,
      'Host: 127.0.0.1',
      `Content-Length: ${DECLARED}`,
      ...Object.entries(headers).map(([name, value]) => `${name}: ${value}`),
    ];
    const { answer, answeredAfterMs, closedAfterMs } = await rawRequestSentSlowly(toPort, `${head.join('\r\n')}\r\n\r\n`, pieces, gapMs);
    const seen = { path, status: answer.status, type: answer.headers['content-type'], body: JSON.parse(answer.body.toString()) };
    expect(seen).toEqual({ path, status: 408, type: 'application/json; charset=utf-8', body: { error: BODY_READ_TIMEOUT_MESSAGE } });
    expect(answer.headers.connection).toBe('close');
    expect(answeredAfterMs).toBeGreaterThanOrEqual(BODY_READ_TIMEOUT_MS - 100);
    expect(answeredAfterMs).toBeLessThan(BODY_READ_TIMEOUT_MS + SLACK_MS);
    // The server closed the connection: the trickle's next byte would come a second after the answer.
    expect(closedAfterMs - answeredAfterMs).toBeLessThan(900);
  };

  /** Every request timed out is logged once at info, as the client's doing; nothing at error level. */
  const loggedAsTheClients = (logs: ReturnType<typeof captureLogs>, count: number) => {
    const lines = logs.lines();
    expect(lines.filter((line) => line.level >= 50)).toEqual([]);
    const timedOut = lines.filter((line) => line.msg === 'request body timed out');
    expect(timedOut).toHaveLength(count);
    for (const line of timedOut) expect(line).toMatchObject({ level: 30, bodyBytes: expect.any(Number), waitedMs: expect.any(Number) });
  };

  it('admin API: a JSON body and an import, trickled one byte a second or stalled after a few bytes', async () => {
    const auth = { Authorization: `Bearer ${TEST_ADMIN_TOKEN}` };
    const createUserCall: [string, string, Record<string, string>] = [
      'POST',
      '/admin/v1/users',
      { ...auth, 'Content-Type': 'application/json' },
    ];
    const importCall: [string, string, Record<string, string>] = [
      'POST',
      `/admin/v1/users/${userId}/contacts/import`,
      { ...auth, 'Content-Type': 'application/x-ndjson' },
    ];
    await Promise.all([
      refusedInTime(admin.port, createUserCall, TRICKLE),
      refusedInTime(admin.port, createUserCall, STALL),
      refusedInTime(admin.port, importCall, TRICKLE),
      refusedInTime(admin.port, importCall, STALL),
    ]);
    loggedAsTheClients(adminLogs, 4);
    expect(adminLogs.lines().filter((line) => line.msg === 'admin call' && line.status === 408)).toHaveLength(4);
    expect(await contactCount(userId)).toBe(0);
  });

  it('public doors: /mcp, CardDAV PROPFIND and REPORT, and the OAuth token endpoint', async () => {
    const dav = { Authorization: basic(key), 'Content-Type': 'application/xml; charset=utf-8', Depth: '0' };
    await Promise.all([
      refusedInTime(
        port,
        [
          'POST',
          '/mcp',
          { Authorization: `Bearer ${key}`, 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream' },
        ],
        TRICKLE,
      ),
      refusedInTime(port, ['PROPFIND', `/dav/addressbooks/${userId}/`, dav], STALL),
      refusedInTime(port, ['REPORT', `/dav/addressbooks/${userId}/contacts/`, dav], TRICKLE),
      refusedInTime(port, ['POST', '/oauth/token', { 'Content-Type': 'application/x-www-form-urlencoded' }], STALL),
    ]);
    loggedAsTheClients(publicLogs, 4);
  });

  it('a request refused from its head (a wrong key) whose body then stalls: the connection is closed within the bound', async () => {
    const head = `POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer cnt_live_wrong\r\nContent-Type: application/json\r\nContent-Length: ${DECLARED}\r\n\r\n`;
    const { answer, closedAfterMs } = await rawRequestSentSlowly(port, head, STALL.pieces, STALL.gapMs);
    expect(answer.status).toBe(401);
    expect(closedAfterMs).toBeGreaterThanOrEqual(BODY_READ_TIMEOUT_MS - 100);
    expect(closedAfterMs).toBeLessThan(BODY_READ_TIMEOUT_MS + SLACK_MS);
    loggedAsTheClients(publicLogs, 5);
  });

  it('an import streamed at a healthy pace for longer than the bound, and one of a few MB at full speed, are imported', async () => {
    // About 300 bytes a record: a few MB in few enough records that the import is quick on both databases.
    const padding = 'p'.repeat(120);
    const line = (index: number) =>
      `{"name":"Streamed ${index}","email":"streamed${index}@example.com","company":"${padding}","title":"${padding}"}\n`;
    const lines = Array.from({ length: 7_000 }, (_, index) => line(index)).join('');
    const bytes = Buffer.from(lines);
    expect(bytes.length).toBeGreaterThan(2 * 1024 * 1024);
    const fullSpeed = await admin.request('POST', `/admin/v1/users/${userId}/contacts/import`, {
      raw: bytes,
      headers: { 'content-type': 'application/x-ndjson' },
    });
    expect([fullSpeed.status, fullSpeed.json.created]).toEqual([200, 7_000]);

    // 64 KiB every 100 ms, 2.4 s in all: past BODY_READ_TIMEOUT_MS, and far above the pace a body must keep.
    const other = await createUser(db().store);
    const piece = 64 * 1024;
    const whole = bytes.subarray(0, bytes.lastIndexOf(0x0a, 24 * piece) + 1);
    const slices = Array.from({ length: 24 }, (_, index) => whole.subarray(index * piece, (index + 1) * piece));
    const streamed = new ReadableStream<Uint8Array>({
      async pull(controller) {
        const next = slices.shift();
        if (next === undefined) return controller.close();
        await new Promise((resolve) => setTimeout(resolve, 100));
        controller.enqueue(next);
      },
    });
    const started = performance.now();
    const answer = await fetch(`${admin.url}/admin/v1/users/${other.id}/contacts/import`, {
      method: 'POST',
      headers: { authorization: `Bearer ${TEST_ADMIN_TOKEN}`, 'content-type': 'application/x-ndjson', connection: 'close' },
      body: streamed,
      duplex: 'half',
    } as RequestInit);
    expect(performance.now() - started).toBeGreaterThan(BODY_READ_TIMEOUT_MS);
    const summary = (await answer.json()) as { created: number };
    const records = whole.toString().split('\n').length - 1;
    expect([answer.status, summary.created, await contactCount(other.id)]).toEqual([200, records, records]);
    expect(adminLogs.lines().filter((line) => line.level >= 50)).toEqual([]);
  });
});
