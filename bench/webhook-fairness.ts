/**
 * Issue 33's webhook fairness scenario against `serve` (dist, two workers): owner A's 40 endpoints on a receiver that
 * accepts connections and never answers (A's retries come back every second), owner B's one endpoint answering at once;
 * B writes 200 contacts 150 ms apart, and each is timed from its write's return to its event's arrival.
 *
 *   npx tsx bench/webhook-fairness.ts [--no-postgres] [--postgres URL] [--out docs/benchmarks.md]
 *
 * Runs with WEBHOOK_TIMEOUT_MS=5000 and with the default (15 s), on scratch databases of its own.
 */
import { execFileSync } from 'node:child_process';
import { cpus, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { mkdtempSync, rmSync } from 'node:fs';
import { parseArgs } from 'node:util';
import pg from 'pg';
import { openStore } from '../src/store/open-store.js';
import { parseDatabaseUrl } from '../src/domain/database-url.js';
import { latenciesBehindDeadEndpoints, latencyFigures, type LatencyFigures } from '../test/support/webhook-fairness.js';
import { writeResultsSection } from './results-file.js';
import { startServe } from './serve-process.js';

const { values: args } = parseArgs({
  options: {
    'no-postgres': { type: 'boolean', default: false },
    postgres: { type: 'string', default: 'postgres://postgres@127.0.0.1:5432/postgres' },
    out: { type: 'string' },
  },
});
const BIN = resolve(import.meta.dirname, '..', 'dist/cli/main.js');
const SCENARIO = { deadEndpoints: 40, writes: 200, gapMs: 150, deliveryTimeoutMs: 120_000 };
const TIMEOUTS = [
  { label: '5 s', env: '5000' },
  { label: '15 s (default)', env: undefined },
];

async function scratchDatabase(name: string): Promise<{ url: string; drop(): Promise<void> }> {
  if (name === 'SQLite') {
    const dir = mkdtempSync(join(tmpdir(), 'webhook-fairness-'));
    return { url: `file:${join(dir, 'contacts.db')}`, drop: async () => rmSync(dir, { recursive: true, force: true }) };
  }
  const dbName = `contacts_bench_fairness_${process.pid}`;
  const admin = async (sql: string) => {
    const client = new pg.Client({ connectionString: args.postgres });
    await client.connect();
    await client.query(sql);
    await client.end();
  };
  await admin(`DROP DATABASE IF EXISTS ${dbName} WITH (FORCE)`);
  await admin(`CREATE DATABASE ${dbName}`);
  const url = new URL(args.postgres!);
  url.pathname = `/${dbName}`;
  return { url: url.toString(), drop: () => admin(`DROP DATABASE IF EXISTS ${dbName} WITH (FORCE)`) };
}

async function measure(database: string, timeoutMs: string | undefined): Promise<LatencyFigures> {
  const scratch = await scratchDatabase(database);
  const env = { ...process.env, DATABASE_URL: scratch.url, LOG_LEVEL: 'error' };
  execFileSync(process.execPath, [BIN, 'migrate'], { env });
  const store = await openStore(parseDatabaseUrl(scratch.url));
  const server = await startServe({
    ...env,
    WORKERS: '2',
    WEBHOOKS_ALLOW_PRIVATE_URLS: 'true',
    WEBHOOK_RETRY_SCHEDULE: Array.from({ length: 40 }, () => '1s').join(','),
    ...(timeoutMs === undefined ? {} : { WEBHOOK_TIMEOUT_MS: timeoutMs }),
  });
  try {
    return latencyFigures((await latenciesBehindDeadEndpoints(store, SCENARIO)).latencies);
  } finally {
    await server.stop();
    await store.close();
    await scratch.drop();
  }
}

const rows: string[] = [];
for (const database of args['no-postgres'] ? ['SQLite'] : ['SQLite', 'PostgreSQL']) {
  for (const timeout of TIMEOUTS) {
    const figures = await measure(database, timeout.env);
    const row = `| ${database} | ${timeout.label} | ${figures.p50} | ${figures.p99} | ${figures.max} |`;
    process.stderr.write(`${row}\n`);
    rows.push(row);
  }
}
const report = [
  `Owner B's write → delivery while owner A's ${SCENARIO.deadEndpoints} endpoints time out: \`serve\` with two workers on ${cpus().length} × ${cpus()[0]?.model ?? 'CPU'}, Node ${process.version}; A's endpoints on a loopback receiver that accepts connections and never answers, A's retries every second; B's ${SCENARIO.writes} single-contact writes ${SCENARIO.gapMs} ms apart, each from its write's return to its event's arrival.`,
  '',
  '| database | WEBHOOK_TIMEOUT_MS | B p50 ms | B p99 ms | B max ms |',
  '|---|---|---:|---:|---:|',
  ...rows,
].join('\n');
process.stdout.write(`${report}\n`);
if (args.out) writeResultsSection(args.out, 'webhook-fairness', `## Webhook fairness (issue 33)\n\n${report}`);
