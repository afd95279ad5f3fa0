/**
 * The webhook scenario of the benchmark (`npm run bench -- --webhooks-only`, or with the rest): `serve` (dist) delivers to
 * one fast receiver on loopback in this process, which answers 204 at once.
 *
 * - events per second: a `contacts import` of EVENTS contacts of a user with one endpoint, from the first event that
 *   arrives to the last;
 * - write → first attempt: WRITES single-contact imports, one every WRITE_GAP_MS, each timed from the moment its write
 *   returned to the moment its event reached the receiver (both on this process's clock);
 * - the import's rows per second with an endpoint delivering and without one: the cursor design adds no writes to an
 *   import, so both should be within noise.
 */
import { execFileSync, spawn } from 'node:child_process';
import { once } from 'node:events';
import { writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { createWebhook } from '../src/operations/webhooks.js';
import { openStore } from '../src/store/open-store.js';
import { parseDatabaseUrl } from '../src/domain/database-url.js';
import type { Store } from '../src/store/store.js';
import { contactRecord } from '../test/support/seed.js';

const EVENTS = 20_000;
const WRITES = 200;
const WRITE_GAP_MS = 50;

export interface WebhookFigures {
  database: string;
  eventsPerSecond: number;
  latencyP50Ms: number;
  latencyP99Ms: number;
  importRowsPerSecondWithout: number;
  importRowsPerSecondWith: number;
}

/** A receiver that answers every POST with 204 at once, noting when each contact's event first arrived. */
async function fastReceiver(): Promise<{ server: Server; url: string; arrivals: Map<string, number> }> {
  const arrivals = new Map<string, number>();
  const server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const at = Date.now();
      const id = /"data":\{"type":"\w+","id":"([^"]+)"/.exec(Buffer.concat(chunks).toString('utf8'))?.[1];
      if (id !== undefined && !arrivals.has(id)) arrivals.set(id, at);
      response.writeHead(204).end();
    });
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return { server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks`, arrivals };
}

const percentile = (sorted: number[], p: number) => sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function waitFor(condition: () => boolean, timeoutMs: number, what: string): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(20);
  }
}

/**
 * Measures one database, `databaseUrl` an empty, migrated database of its own; `bin` is dist/cli/main.js, `work` a
 * folder for the import file.
 */
export async function measureWebhooks(
  database: string,
  databaseUrl: string,
  bin: string,
  work: string,
  port: number,
  log: (line: string) => void,
): Promise<WebhookFigures> {
  const cli = (...args: string[]) =>
    execFileSync(process.execPath, [bin, ...args], {
      env: { ...process.env, DATABASE_URL: databaseUrl, LOG_LEVEL: 'warn' },
      encoding: 'utf8',
    });
  const file = join(work, 'webhooks-import.ndjson');
  writeFileSync(file, Array.from({ length: EVENTS }, (_, index) => `${JSON.stringify({ name: `Pushed ${index + 1}` })}\n`).join(''));
  const receiver = await fastReceiver();
  const store: Store = await openStore(parseDatabaseUrl(databaseUrl));
  const server = spawn(process.execPath, [bin, 'serve', '--port', String(port)], {
    env: { ...process.env, DATABASE_URL: databaseUrl, LOG_LEVEL: 'warn', WEBHOOKS_ALLOW_PRIVATE_URLS: 'true', RATE_LIMIT_PER_MINUTE: '0' },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  try {
    let started = '';
    server.stderr!.on('data', (chunk: Buffer) => (started += chunk.toString()));
    await waitFor(() => /listening on/.test(started), 60_000, 'serve to listen');
    const timedImport = (email: string) => {
      const begin = Date.now();
      cli('contacts', 'import', '--user', email, file);
      return EVENTS / ((Date.now() - begin) / 1000);
    };
    const quiet = `quiet-${Date.now()}@example.com`;
    cli('users', 'create', '--email', quiet, '--plan', 'pro');
    const importRowsPerSecondWithout = timedImport(quiet);

    const pushed = `pushed-${Date.now()}@example.com`;
    const user = JSON.parse(cli('users', 'create', '--email', pushed, '--plan', 'pro', '--json')) as { id: string };
    await createWebhook(store, { user: user.id, url: receiver.url }, { allowPrivate: true, retentionMs: 30 * 86_400_000 });
    const importRowsPerSecondWith = timedImport(pushed);
    await waitFor(() => receiver.arrivals.size >= EVENTS, 600_000, `${EVENTS} events`);
    const times = [...receiver.arrivals.values()];
    const eventsPerSecond = EVENTS / ((Math.max(...times) - Math.min(...times)) / 1000);
    log(`${database}: ${EVENTS} events at ${eventsPerSecond.toFixed(0)}/s`);

    const written = new Map<string, number>();
    for (let index = 0; index < WRITES; index += 1) {
      const id = crypto.randomUUID();
      await store.contacts.importContacts(user.id, [contactRecord({ name: `Single ${index}` }, id)]);
      written.set(id, Date.now());
      await sleep(WRITE_GAP_MS);
    }
    await waitFor(() => [...written.keys()].every((id) => receiver.arrivals.has(id)), 60_000, 'the single writes');
    const latencies = [...written].map(([id, at]) => receiver.arrivals.get(id)! - at).sort((a, b) => a - b);
    return {
      database,
      eventsPerSecond,
      latencyP50Ms: percentile(latencies, 50),
      latencyP99Ms: percentile(latencies, 99),
      importRowsPerSecondWithout,
      importRowsPerSecondWith,
    };
  } finally {
    server.kill('SIGTERM');
    await once(server, 'exit');
    await store.close();
    receiver.server.close();
  }
}

export function webhookTable(figures: readonly WebhookFigures[]): string {
  return [
    `| database | events/s to one receiver (${EVENTS.toLocaleString('en')} events) | write → first attempt p50 ms | p99 ms | \`contacts import\` rows/s without an endpoint | with one delivering |`,
    '|---|---:|---:|---:|---:|---:|',
    ...figures.map(
      (f) =>
        `| ${f.database} | ${f.eventsPerSecond.toFixed(0)} | ${f.latencyP50Ms} | ${f.latencyP99Ms} | ${f.importRowsPerSecondWithout.toFixed(0)} | ${f.importRowsPerSecondWith.toFixed(0)} |`,
    ),
  ].join('\n');
}
