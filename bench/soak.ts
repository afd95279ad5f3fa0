/**
 * Soak test: starts `contacts-read-api serve` as a child process, seeds a Pro user with contacts through the CLI,
 * holds load on the contact list for a while with autocannon (loopback only), and reports latency, errors
 * and the server's resident memory over time — a leak shows as RSS that keeps growing after warm-up.
 *
 *   npm run soak -- [--seconds 60] [--connections 16] [--contacts 2000] [--db postgres://…/scratch]
 *
 * Without --db it runs on a fresh SQLite file in a temp dir. With --db it adds one user to that database
 * (use a scratch database). The rate limit is off for the server under test: this measures the service.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import autocannon from 'autocannon';
import { rssMiB, seedOwner, startServe } from './serve-process.js';

const { values: args } = parseArgs({
  options: {
    seconds: { type: 'string', default: '60' },
    connections: { type: 'string', default: '16' },
    contacts: { type: 'string', default: '2000' },
    db: { type: 'string' },
  },
});
const seconds = positiveInteger('seconds', args.seconds);
const connections = positiveInteger('connections', args.connections);
const contactCount = positiveInteger('contacts', args.contacts);
/** Memory is sampled this many times over the run, after warm-up. */
const RSS_SAMPLES = 6;
const WARMUP_SECONDS = Math.min(10, Math.max(2, Math.round(seconds / 10)));

function positiveInteger(name: string, text: string | undefined): number {
  const value = Number(text);
  if (!Number.isInteger(value) || value < 1) throw new Error(`--${name} must be a positive integer; got "${text}"`);
  return value;
}

const work = mkdtempSync(join(tmpdir(), 'contacts-soak-'));
const databaseUrl = args.db ?? `file:${join(work, 'contacts.db')}`;
const env = { ...process.env, DATABASE_URL: databaseUrl, API_KEY_PREFIX: 'cnt', LOG_LEVEL: 'warn', RATE_LIMIT_PER_MINUTE: '0' };

function load(url: string, key: string, durationSeconds: number): Promise<autocannon.Result> {
  // Pages spread over the whole list, so that every request reads different rows.
  const pages = Array.from({ length: 20 }, (_, index) => ({
    method: 'GET' as const,
    path: `/api/v1/contacts?limit=${[10, 50, 100][index % 3]}&offset=${Math.floor((index * contactCount) / 20)}`,
  }));
  return autocannon({ url, connections, duration: durationSeconds, headers: { authorization: `Bearer ${key}` }, requests: pages });
}

async function main(): Promise<number> {
  console.log(`Seeding ${contactCount} contacts through the CLI on ${args.db ? 'PostgreSQL' : 'SQLite'}…`);
  const key = await seedOwner(env, work, contactCount, 'soak');
  const server = await startServe(env);
  try {
    const { url, pid } = server;
    const rss: { at: string; mib: number }[] = [{ at: 'start (idle)', mib: rssMiB(pid) }];

    console.log(`Warming up for ${WARMUP_SECONDS} s, then ${seconds} s at ${connections} connections against ${url}…`);
    await load(url, key, WARMUP_SECONDS);
    rss.push({ at: 'after warm-up', mib: rssMiB(pid) });
    const started = performance.now();
    const sampler = setInterval(
      () => rss.push({ at: `${Math.round((performance.now() - started) / 1000)} s`, mib: rssMiB(pid) }),
      (seconds * 1000) / RSS_SAMPLES,
    );
    const result = await load(url, key, seconds);
    clearInterval(sampler);
    rss.push({ at: 'end', mib: rssMiB(pid) });

    const errors = result.errors + result.timeouts + result.non2xx;
    const afterWarmup = rss[1]!.mib;
    const end = rss.at(-1)!.mib;
    console.log();
    console.table({
      duration: `${seconds} s, ${connections} connections, ${args.db ? 'PostgreSQL' : 'SQLite'}, ${contactCount} contacts`,
      requests: `${result.requests.total} (${Math.round(result.requests.average)}/s)`,
      'latency p50': `${result.latency.p50} ms`,
      'latency p99': `${result.latency.p99} ms`,
      'latency max': `${result.latency.max} ms`,
      errors: `${errors} (socket ${result.errors}, timeouts ${result.timeouts}, non-2xx ${result.non2xx})`,
      'RSS at start': `${rss[0]!.mib.toFixed(1)} MiB`,
      'RSS after warm-up': `${afterWarmup.toFixed(1)} MiB`,
      'RSS at end': `${end.toFixed(1)} MiB (${end >= afterWarmup ? '+' : ''}${(end - afterWarmup).toFixed(1)} since warm-up)`,
    });
    console.log('RSS over the run:', rss.map((sample) => `${sample.at}: ${sample.mib.toFixed(1)}`).join(' | '));
    return errors === 0 ? 0 : 1;
  } finally {
    await server.stop();
  }
}

try {
  process.exitCode = await main();
} finally {
  rmSync(work, { recursive: true, force: true });
}
