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
import { execFile, spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { parseArgs, promisify } from 'node:util';
import autocannon from 'autocannon';
import { generateDemoContacts } from '../src/demo/demo-contacts.js';

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
const BIN = resolve(import.meta.dirname, '..', 'dist/cli/main.js');
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

async function cli<T>(...cliArgs: string[]): Promise<T> {
  const { stdout } = await promisify(execFile)(process.execPath, [BIN, ...cliArgs, '--json'], { env, maxBuffer: 16 * 1024 * 1024 });
  return JSON.parse(stdout) as T;
}

/** Resident set size of a process in MiB, from /proc/<pid>/status. */
function rssMiB(pid: number): number {
  const match = /^VmRSS:\s+(\d+) kB$/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  if (!match) throw new Error(`no VmRSS for process ${pid}`);
  return Number(match[1]) / 1024;
}

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
  const user = await cli<{ id: string }>('users', 'create', '--email', `soak-${Date.now()}@example.com`, '--name', 'Soak', '--plan', 'pro');
  const { key } = await cli<{ key: string }>('keys', 'create', '--user', user.id, '--label', 'soak');
  const file = join(work, 'contacts.ndjson');
  writeFileSync(
    file,
    generateDemoContacts(contactCount, 7, new Date())
      .map((record) => JSON.stringify(record.contact.values))
      .join('\n'),
  );
  await cli('contacts', 'import', '--user', user.id, file);

  const server = spawn(process.execPath, [BIN, 'serve', '--host', '127.0.0.1', '--port', '0'], {
    env,
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  const exited = once(server, 'exit');
  try {
    const url = await new Promise<string>((resolveUrl, reject) => {
      let stderr = '';
      server.stderr!.on('data', (chunk: Buffer) => {
        stderr += chunk.toString();
        const match = /listening on (http:\/\/\S+)/.exec(stderr);
        if (match) resolveUrl(match[1]!);
      });
      server.once('exit', (code) => reject(new Error(`serve exited with ${code}: ${stderr}`)));
    });
    const pid = server.pid!;
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
    server.kill('SIGTERM');
    await exited;
  }
}

try {
  process.exitCode = await main();
} finally {
  rmSync(work, { recursive: true, force: true });
}
