/**
 * Issue 24's stalled readers against `serve --workers 2` on SQLite: N connections each send PIPELINE page requests
 * (`GET /api/v1/contacts?limit=100&offset=…`, keep-alive, with a Pro user's key) in one write and never read a byte.
 * Samples every worker's VmRSS for SECONDS, then counts the server's sockets on the port that are still open (from
 * /proc/net/tcp and tcp6: a connection the server reset is gone from there even though this client never read it).
 *
 *   npm run bench:stalled -- [--connections 800] [--pipeline 12] [--seconds 40] [--contacts 2000]
 *
 * Runs on a fresh SQLite file in a temp dir.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { connect, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { parseArgs } from 'node:util';
import { childPids } from '../test/support/process-tree.js';
import { rssMiB, seedOwner, startServe } from './serve-process.js';

const { values: args } = parseArgs({
  options: {
    connections: { type: 'string', default: '800' },
    pipeline: { type: 'string', default: '12' },
    seconds: { type: 'string', default: '40' },
    contacts: { type: 'string', default: '2000' },
  },
});
const connections = Number(args.connections);
const pipeline = Number(args.pipeline);
const seconds = Number(args.seconds);
const contactCount = Number(args.contacts);
const WORKERS = 2;
const PAGE = 100;
const RSS_INTERVAL_MS = 250;
const LISTEN_STATE = '0A';

/** Server-side sockets on `port` that are not listening: /proc/net/tcp's local address ends in the port, in hex. */
function openServerSockets(port: number): number {
  const suffix = `:${port.toString(16).toUpperCase().padStart(4, '0')}`;
  let open = 0;
  for (const table of ['/proc/net/tcp', '/proc/net/tcp6']) {
    for (const line of readFileSync(table, 'utf8').split('\n').slice(1)) {
      const [, local, , state] = line.trim().split(/\s+/);
      if (local?.endsWith(suffix) && state !== LISTEN_STATE) open += 1;
    }
  }
  return open;
}

function stalledReader(url: URL, key: string, index: number): Socket {
  const requests = Array.from({ length: pipeline }, (_, n) => {
    const offset = ((index * pipeline + n) * PAGE) % contactCount;
    return `GET /api/v1/contacts?limit=${PAGE}&offset=${offset} HTTP/1.1\r\nHost: ${url.host}\r\nAuthorization: Bearer ${key}\r\nConnection: keep-alive\r\n\r\n`;
  });
  const socket = connect(Number(url.port), url.hostname, () => socket.write(requests.join('')));
  // Never read: libuv stops reading, the kernel's receive buffer fills, and the server's writes back up.
  socket.pause();
  socket.on('error', () => {});
  return socket;
}

async function main(): Promise<void> {
  const work = mkdtempSync(join(tmpdir(), 'contacts-stalled-'));
  const env = { ...process.env, DATABASE_URL: `file:${join(work, 'contacts.db')}`, API_KEY_PREFIX: 'cnt', LOG_LEVEL: 'warn' };
  try {
    console.log(`Seeding ${contactCount} contacts through the CLI on SQLite…`);
    const key = await seedOwner(env, work, contactCount, 'stalled');
    const server = await startServe(env, ['--workers', String(WORKERS)]);
    const sockets: Socket[] = [];
    try {
      const url = new URL(server.url);
      const workers = childPids(server.pid);
      const idle = workers.map(rssMiB);
      const peak = [...idle];
      const sampler = setInterval(() => {
        workers.forEach((pid, n) => {
          try {
            peak[n] = Math.max(peak[n]!, rssMiB(pid));
          } catch {
            // the worker exited: reported as replaced below
          }
        });
      }, RSS_INTERVAL_MS);
      for (let index = 0; index < connections; index += 1) sockets.push(stalledReader(url, key, index));
      await sleep(seconds * 1_000);
      clearInterval(sampler);
      const open = openServerSockets(Number(url.port));
      const atEnd = workers.map((pid) => {
        try {
          return `${rssMiB(pid).toFixed(0)}`;
        } catch {
          return 'exited';
        }
      });
      const replaced = workers.filter((pid) => !childPids(server.pid).includes(pid)).length;
      console.table({
        run: `${connections} connections × ${pipeline} pipelined pages of ${PAGE}, never read, ${WORKERS} workers, SQLite`,
        'worker RSS idle (MiB)': idle.map((mib) => mib.toFixed(0)).join(', '),
        'worker RSS peak (MiB)': peak.map((mib) => mib.toFixed(0)).join(', '),
        [`worker RSS at ${seconds} s (MiB)`]: atEnd.join(', '),
        [`server sockets open at ${seconds} s`]: `${open} of ${connections}`,
        'workers replaced': replaced,
      });
    } finally {
      for (const socket of sockets) socket.destroy();
      await server.stop();
    }
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}

await main();
