import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SERVER_BUSY_MESSAGE } from '../../src/domain/errors.js';
import { createTestDatabase, type TestDatabase } from '../support/backends.js';
import { processTree } from '../support/process-tree.js';
import { rawRequest } from '../support/raw-http.js';
import { fetchContacts } from '../support/requests.js';
import { contactRecord, createKey, createUser } from '../support/seed.js';
import { startServerProcess, type ServerProcess } from '../support/server-process.js';

const MAX_INFLIGHT = 4;
const PIPELINED = 12;

/** More requests at once than MAX_INFLIGHT_REQUESTS allows one process: the rest are refused, the process stays. */
describe('serve --workers 2 with MAX_INFLIGHT_REQUESTS', () => {
  let database: TestDatabase;
  let dispose: () => Promise<void>;
  let server: ServerProcess;
  let key: string;

  beforeAll(async () => {
    ({ database, dispose } = await createTestDatabase('sqlite'));
    const owner = await createUser(database.store);
    await database.store.contacts.importContacts(owner.id, [contactRecord({ name: 'Ada' })]);
    key = (await createKey(database.store, owner.id)).key;
    server = await startServerProcess({
      DATABASE_URL: database.databaseUrl,
      WORKERS: '2',
      RATE_LIMIT_PER_MINUTE: '0',
      LOG_LEVEL: 'warn',
      MAX_INFLIGHT_REQUESTS: String(MAX_INFLIGHT),
    });
  });
  afterAll(async () => {
    await server?.kill();
    await dispose?.();
  });

  it('answers a burst past the bound with 503, Retry-After and a JSON error, serves /healthz, and no worker exits', async () => {
    const pids = processTree(server.child.pid!);
    const { port, host } = new URL(server.url);
    const page = `GET /api/v1/contacts?limit=100 HTTP/1.1\r\nHost: ${host}\r\nAuthorization: Bearer ${key}\r\n\r\n`;
    const probe = `GET /healthz HTTP/1.1\r\nHost: ${host}\r\nConnection: close\r\n\r\n`;
    // Pipelined requests that arrive in one read are all handled before any answer is written: a burst in one worker.
    const first = await rawRequest(Number(port), page.repeat(PIPELINED) + probe);
    // rawRequest parses the first answer; the others follow in what it takes for its body.
    const others = first.body
      .toString('latin1')
      .split(/(?=HTTP\/1\.1 \d{3} )/)
      .slice(1);
    const statuses = [first.status, ...others.map((text) => Number(text.slice('HTTP/1.1 '.length, 'HTTP/1.1 200'.length)))];

    const refusals = PIPELINED - MAX_INFLIGHT;
    expect(statuses).toEqual([...Array(MAX_INFLIGHT).fill(200), ...Array(refusals).fill(503), 200]);
    const refused = others.filter((text) => text.startsWith('HTTP/1.1 503 '));
    expect(refused).toHaveLength(refusals);
    for (const text of refused) {
      expect(text).toMatch(/\r\nretry-after: 1\r\n/i);
      expect(text).toContain(JSON.stringify({ error: SERVER_BUSY_MESSAGE }));
    }
    expect((await fetchContacts(server.url, key)).status).toBe(200);
    expect(processTree(server.child.pid!)).toEqual(pids);
  });
});
