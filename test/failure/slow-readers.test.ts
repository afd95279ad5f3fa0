import { once } from 'node:events';
import { readFileSync } from 'node:fs';
import { connect, type Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { MAX_PIPELINED_REQUESTS } from '../../src/web/slow-readers.js';
import { createTestDatabase, type TestDatabase } from '../support/backends.js';
import { isRunning } from '../support/process-tree.js';
import { contactRecord, createKey, createUser } from '../support/seed.js';
import { startServerProcess, type ServerProcess } from '../support/server-process.js';

const STALL_TIMEOUT_MS = 1_000;
/** Far beyond the watchdog's bound; only old code, which never closes these connections, comes near it. */
const CLOSED_WITHIN_MS = 20_000;
const CLOSED_MESSAGE = 'closed a connection whose client does not read its answers';

/**
 * Clients that send requests and never read the answers: the server must close their connections, not keep their
 * answers in memory for as long as they stay connected.
 */
describe('serve with clients that stop reading', () => {
  let database: TestDatabase;
  let dispose: () => Promise<void>;
  let server: ServerProcess;
  let key: string;
  let smallKey: string;
  const sockets: Socket[] = [];

  beforeAll(async () => {
    ({ database, dispose } = await createTestDatabase('sqlite'));
    const { store } = database;
    // About 60 KB a contact: a page of 100 is 6 MB, more than the kernel's buffers of a connection hold.
    const owner = await createUser(store);
    const description = 'scraped profile notes '.repeat(2_700);
    await store.contacts.importContacts(
      owner.id,
      Array.from({ length: 100 }, (_, i) => contactRecord({ name: `Large ${i}`, description })),
    );
    key = (await createKey(store, owner.id)).key;
    const smallOwner = await createUser(store);
    await store.contacts.importContacts(smallOwner.id, [contactRecord({ name: 'Small' })]);
    smallKey = (await createKey(store, smallOwner.id)).key;
    server = await startServerProcess({
      DATABASE_URL: database.databaseUrl,
      RATE_LIMIT_PER_MINUTE: '0',
      LOG_LEVEL: 'warn',
      WRITE_STALL_TIMEOUT_MS: String(STALL_TIMEOUT_MS),
    });
  });
  afterAll(async () => {
    for (const socket of sockets) socket.destroy();
    await server?.kill();
    await dispose?.();
  });

  /** A connection that sends `count` page requests in one write and reads nothing. */
  async function pipelineWithoutReading(credential: string, count: number): Promise<Socket> {
    const { port } = new URL(server.url);
    const socket = connect(Number(port), '127.0.0.1');
    sockets.push(socket);
    socket.on('error', () => undefined);
    await once(socket, 'connect');
    socket.pause();
    const request = `GET /api/v1/contacts?limit=100 HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nAuthorization: Bearer ${credential}\r\n\r\n`;
    socket.write(request.repeat(count));
    return socket;
  }

  /** Waits until the server has closed each connection: the kernel no longer lists it as established. */
  async function closedByServer(connections: Socket[]): Promise<void> {
    const localPorts = connections.map((socket) => socket.localPort!);
    await vi.waitFor(() => expect(localPorts.filter(isEstablished)).toEqual([]), { timeout: CLOSED_WITHIN_MS, interval: 100 });
  }

  /** The server says why it closed a connection, once per reason and 10 s. */
  const warnedOf = (reason: string) =>
    vi.waitFor(() => expect(server.logLines().filter((line) => line.msg === CLOSED_MESSAGE && line.reason === reason)).not.toEqual([]));

  it('closes connections whose client takes none of an answer for WRITE_STALL_TIMEOUT_MS, and stays responsive', async () => {
    const pid = server.child.pid!;
    const stalled = await Promise.all(Array.from({ length: 8 }, () => pipelineWithoutReading(key, 1)));
    await closedByServer(stalled);
    await warnedOf('stalled');
    expect((await fetch(`${server.url}/healthz`)).status).toBe(200);
    expect(isRunning(pid)).toBe(true);
  });

  it('closes a connection whose answers waiting behind the one being written pass WRITE_BACKLOG_MAX_KB', async () => {
    await closedByServer([await pipelineWithoutReading(key, 3)]);
    await warnedOf('backlog');
  });

  it('closes a connection that pipelined and then stays silent with its answers unread, though they fit in the kernel', async () => {
    // Two small answers leave nothing for the server to see waiting; the keep-alive timeout (72 s) would end it only later.
    await closedByServer([await pipelineWithoutReading(smallKey, 2)]);
    await warnedOf('idle-after-pipelining');
  });

  it(`closes a connection that pipelines more than ${MAX_PIPELINED_REQUESTS} requests at once`, async () => {
    await closedByServer([await pipelineWithoutReading(smallKey, 100)]);
    await warnedOf('pipelined');
    expect((await fetch(`${server.url}/healthz`)).status).toBe(200);
  });
});

/** Whether /proc/net/tcp lists a loopback connection from this local port as established (state 01). */
function isEstablished(localPort: number): boolean {
  const local = `0100007F:${localPort.toString(16).toUpperCase().padStart(4, '0')}`;
  return readFileSync('/proc/net/tcp', 'utf8')
    .split('\n')
    .some((line) => {
      const [, address, , state] = line.trim().split(/\s+/);
      return address === local && state === '01';
    });
}
