/**
 * The security review's load mix against `serve --workers 2`: 256 connections of REST pages, MCP calls and batches of
 * 20 list_contacts, /healthz and /readyz probes, and bad keys (bench/load-mix.ts), for 30 s with the rate limit on
 * (600 a minute) and off. Reports worker crashes, 5xx other than 503 with Retry-After, and the peak worker RSS; exits
 * 1 when there is any crash or such 5xx.
 *
 *   npm run bench:hostile -- [--seconds 30] [--connections 256] [--contacts 2000] [--rate-limit both|on|off]
 *
 * Runs on a fresh SQLite file in a temp dir.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { childPids } from '../test/support/process-tree.js';
import { runLoadMix } from './load-mix.js';
import { rssMiB, seedOwner, startServe } from './serve-process.js';

const { values: args } = parseArgs({
  options: {
    seconds: { type: 'string', default: '30' },
    connections: { type: 'string', default: '256' },
    contacts: { type: 'string', default: '2000' },
    'rate-limit': { type: 'string', default: 'both' },
  },
});
const seconds = Number(args.seconds);
const connections = Number(args.connections);
const contactCount = Number(args.contacts);
const rateLimits = { both: ['on', 'off'], on: ['on'], off: ['off'] }[args['rate-limit']!];
if (rateLimits === undefined) throw new Error(`--rate-limit must be both, on or off; got "${args['rate-limit']}"`);
const WORKERS = 2;
const RSS_INTERVAL_MS = 250;
const PER_MINUTE = { on: '600', off: '0' } as Record<string, string>;

const work = mkdtempSync(join(tmpdir(), 'contacts-hostile-'));
// Every connection comes from one address, which would be refused outright after 60 bad keys: the mix is about what
// the requests themselves cost.
const env = {
  ...process.env,
  DATABASE_URL: `file:${join(work, 'contacts.db')}`,
  API_KEY_PREFIX: 'cnt',
  LOG_LEVEL: 'warn',
  AUTH_FAILURES_PER_MINUTE: '0',
};

async function run(rateLimit: string, key: string): Promise<boolean> {
  const server = await startServe({ ...env, RATE_LIMIT_PER_MINUTE: PER_MINUTE[rateLimit] }, ['--workers', String(WORKERS)]);
  try {
    const workersAtStart = childPids(server.pid);
    let peakMiB = 0;
    const sampler = setInterval(() => {
      for (const pid of childPids(server.pid)) {
        try {
          peakMiB = Math.max(peakMiB, rssMiB(pid));
        } catch {
          // the worker exited between listing and reading: counted as a crash below
        }
      }
    }, RSS_INTERVAL_MS);
    const idleMiB = Math.max(...workersAtStart.map(rssMiB));
    const outcome = await runLoadMix({ url: server.url, key, contactCount, connections, seconds });
    clearInterval(sampler);
    const crashes = server
      .stdout()
      .split('\n')
      .filter((line) => line.includes('"worker exited; starting another"')).length;
    const workersReplaced = workersAtStart.filter((pid) => !childPids(server.pid).includes(pid)).length;
    console.log();
    console.table({
      run: `rate limit ${rateLimit}, ${seconds} s, ${connections} connections, ${WORKERS} workers, SQLite, ${contactCount} contacts`,
      answers: `${outcome.answers} (${Math.round(outcome.answers / seconds)}/s)`,
      statuses: Object.entries(outcome.statuses)
        .map(([status, count]) => `${status}: ${count}`)
        .join(', '),
      'worker crashes': `${crashes} (workers replaced: ${workersReplaced})`,
      '5xx other than 503 with Retry-After': outcome.unexplained5xx,
      latency: `p50 ${outcome.latencyMs.p50} ms, p99 ${outcome.latencyMs.p99} ms`,
      'socket errors and timeouts (10 s)': outcome.socketErrors,
      'worker RSS': `${idleMiB.toFixed(0)} MiB idle, ${peakMiB.toFixed(0)} MiB peak`,
    });
    return crashes === 0 && workersReplaced === 0 && outcome.unexplained5xx === 0;
  } finally {
    await server.stop();
  }
}

async function main(): Promise<number> {
  console.log(`Seeding ${contactCount} contacts through the CLI on SQLite…`);
  const key = await seedOwner(env, work, contactCount, 'hostile');
  let passed = true;
  for (const rateLimit of rateLimits!) passed = (await run(rateLimit, key)) && passed;
  return passed ? 0 : 1;
}

try {
  process.exitCode = await main();
} finally {
  rmSync(work, { recursive: true, force: true });
}
