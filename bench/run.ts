/**
 * The benchmark: loads the deterministic dataset into SQLite and PostgreSQL through the CLI's bulk path,
 * then measures, side by side in one run and with an external load generator (wrk), the transport ceiling,
 * the "competent first try" baseline and this service, and prints each figure as a ratio to both.
 *
 * It also times imports of the big network's contacts into scratch databases, and, at every scale, keeps its figures in
 * `.bench/results-<scale>.json` so that a run at another scale prints both side by side.
 *
 *   npm run bench -- [--scale 1] [--duration 10] [--connections 16] [--no-postgres] [--no-sqlite] [--reload] [--load-only]
 *                    [--webhooks-only] [--out docs/benchmarks.md]
 *
 * `--webhooks-only` runs only the webhook scenario (bench/webhooks.ts), on scratch databases of its own.
 *
 * `--load-only` generates and loads what is missing, then stops; a later run reuses the databases and reports how long
 * their load took (kept in `.bench/load-<database>-<scale>.json`).
 *
 * The baseline (a first try's OFFSET queries) runs at scale 1 and below only: its walk of a 1M-contact network would take
 * hours.
 *
 * Last, it measures CardDAV syncs of a 10,000-contact network by vdirsyncer and a DAVx5-style client (bench/carddav.ts).
 */
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import {
  createReadStream,
  createWriteStream,
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { once } from 'node:events';
import { createInterface } from 'node:readline';
import { Agent, request } from 'node:http';
import { cpus } from 'node:os';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import pg from 'pg';
import { decodeSyncToken, encodeSyncToken } from '../src/domain/changes.js';
import { SERVICE_KEY_SECRET, ServiceKey } from '../src/domain/service-key.js';
import { openStore } from '../src/store/open-store.js';
import { parseDatabaseUrl } from '../src/domain/database-url.js';
import { measureCarddav } from './carddav.js';
import { BIG_USER_EMAIL, SMALL_USER_EMAIL, shapeForScale, writeDataset } from './dataset.js';
import { DEEP_READ_RUNS, measureDeepRead, type DeepRead } from './deep-read.js';
import { writeResultsSection } from './results-file.js';
import { measureWebhooks, webhookTable } from './webhooks.js';

const { values: args } = parseArgs({
  options: {
    scale: { type: 'string', default: '1' },
    duration: { type: 'string', default: '10' },
    warmup: { type: 'string', default: '3' },
    connections: { type: 'string', default: '16' },
    workers: { type: 'string' },
    postgres: { type: 'string', default: 'postgres://postgres@127.0.0.1:5432/postgres' },
    'no-postgres': { type: 'boolean', default: false },
    'no-sqlite': { type: 'boolean', default: false },
    'load-only': { type: 'boolean', default: false },
    'webhooks-only': { type: 'boolean', default: false },
    reload: { type: 'boolean', default: false },
    out: { type: 'string' },
  },
});

const ROOT = resolve(import.meta.dirname, '..');
const BIN = join(ROOT, 'dist/cli/main.js');
const WORK = join(ROOT, '.bench');
const scale = Number(args.scale);
const duration = Number(args.duration);
const connections = Number(args.connections);
const TSX = join(ROOT, 'node_modules/.bin/tsx');

interface Measurement {
  target: string;
  scenario: string;
  rps: number;
  p50: number;
  p99: number;
  peakRssMb: number[];
  note?: string;
}

function log(message: string): void {
  process.stderr.write(`[bench] ${message}\n`);
}

function cli(databaseUrl: string, ...cliArgs: string[]): string {
  return execFileSync(process.execPath, [BIN, ...cliArgs], {
    env: { ...process.env, DATABASE_URL: databaseUrl, LOG_LEVEL: 'warn' },
    encoding: 'utf8',
    maxBuffer: 64 * 1024 * 1024,
  });
}

async function prepareDataset(): Promise<string> {
  const dir = join(WORK, `dataset-${scale}`);
  if (!existsSync(join(dir, 'contacts.ndjson')) || args.reload) {
    log(`generating dataset (scale ${scale}) in ${dir}`);
    const started = Date.now();
    const written = await writeDataset(dir, shapeForScale(scale));
    log(`generated ${written.contacts} contacts over ${written.users} users in ${((Date.now() - started) / 1000).toFixed(1)} s`);
  }
  return dir;
}

interface Database {
  name: string;
  url: string;
  loadSeconds: number | null;
  diskBytes: number;
  bigKey: string;
  smallKey: string;
  bigTotal: number;
}

/**
 * Contacts per `bulk-import` run when loading: one transaction of SQLite puts every page it writes in the WAL before
 * the checkpoint copies it, so a 10M-contact load in one would need the database's size twice over on disk.
 */
const LOAD_PART_CONTACTS = 1_000_000;

/** Loads the dataset through `bulk-import`, in runs of about LOAD_PART_CONTACTS contacts that never split an owner. */
async function bulkLoad(name: string, url: string, dataset: string): Promise<void> {
  const users = ['--users', join(dataset, 'users.ndjson')];
  const contacts = join(dataset, 'contacts.ndjson');
  if (shapeForScale(scale).contacts <= LOAD_PART_CONTACTS) {
    cli(url, 'bulk-import', ...users, '--contacts', contacts);
    return;
  }
  // One file per database: two loads may run at once.
  const partPath = join(WORK, `load-part-${name}-${scale}.ndjson`);
  let part = createWriteStream(partPath);
  let lines = 0;
  let loaded = 0;
  let owner: string | undefined;
  const loadPart = async () => {
    part.end();
    await once(part, 'finish');
    cli(url, 'bulk-import', ...(loaded === 0 ? users : []), '--contacts', partPath);
    loaded += lines;
    log(`${name}: ${loaded.toLocaleString('en')} contacts loaded`);
    part = createWriteStream(partPath);
    lines = 0;
  };
  for await (const line of createInterface({ input: createReadStream(contacts, 'utf8'), crlfDelay: Infinity })) {
    const lineOwner = /^\{"owner":"([^"]*)"/.exec(line)?.[1];
    if (lines >= LOAD_PART_CONTACTS && lineOwner !== owner) await loadPart();
    owner = lineOwner;
    if (!part.write(`${line}\n`)) await once(part, 'drain');
    lines += 1;
  }
  if (lines > 0) await loadPart();
  part.end();
  rmSync(partPath, { force: true });
}

async function prepareDatabase(name: string, url: string, dataset: string, fresh: boolean): Promise<Database> {
  const loadFile = join(WORK, `load-${name}-${scale}.json`);
  let loadSeconds: number | null = null;
  if (fresh) {
    log(`loading the dataset into ${name} through \`contacts-read-api bulk-import\``);
    const started = Date.now();
    cli(url, 'migrate');
    await bulkLoad(name, url, dataset);
    loadSeconds = (Date.now() - started) / 1000;
    writeFileSync(loadFile, JSON.stringify({ loadSeconds }));
    log(`loaded ${name} in ${loadSeconds.toFixed(1)} s`);
  } else if (existsSync(loadFile)) {
    loadSeconds = (JSON.parse(readFileSync(loadFile, 'utf8')) as { loadSeconds: number }).loadSeconds;
  }
  const key = (email: string) => JSON.parse(cli(url, 'keys', 'create', '--user', email, '--label', 'bench', '--json')).key as string;
  const bigKey = key(BIG_USER_EMAIL);
  const smallKey = key(SMALL_USER_EMAIL);
  return { name, url, loadSeconds, diskBytes: 0, bigKey, smallKey, bigTotal: 0 };
}

/** Bytes the database takes on disk: SQLite's file with its WAL, or PostgreSQL's database. */
async function diskBytes(db: Pick<Database, 'url'>): Promise<number> {
  if (db.url.startsWith('file:')) {
    const path = db.url.slice('file:'.length);
    return [path, `${path}-wal`].reduce((sum, file) => sum + (existsSync(file) ? statSync(file).size : 0), 0);
  }
  const client = new pg.Client({ connectionString: db.url });
  await client.connect();
  try {
    return Number((await client.query('SELECT pg_database_size(current_database()) AS size')).rows[0].size);
  } finally {
    await client.end();
  }
}

/** The URL of PostgreSQL database `dbName`, created if missing (or made again when `fresh`); whether it is new. */
async function postgresDatabase(dbName: string, fresh: boolean): Promise<{ url: string; created: boolean }> {
  const admin = new pg.Client({ connectionString: args.postgres });
  await admin.connect();
  const exists = (await admin.query('SELECT 1 FROM pg_database WHERE datname = $1', [dbName])).rowCount === 1;
  if (exists && fresh) await admin.query(`DROP DATABASE ${dbName} WITH (FORCE)`);
  if (!exists || fresh) await admin.query(`CREATE DATABASE ${dbName}`);
  await admin.end();
  const url = new URL(args.postgres!);
  url.pathname = `/${dbName}`;
  return { url: url.toString(), created: !exists || fresh };
}

async function preparePostgres(dataset: string): Promise<Database> {
  const { url, created } = await postgresDatabase(`contacts_bench_${String(scale).replace('.', '_')}`, args.reload!);
  return prepareDatabase('PostgreSQL', url, dataset, created);
}

interface ImportTiming {
  database: string;
  command: string;
  contacts: number;
  seconds: number;
}

/**
 * The big network's contacts as two import files: `contacts import`'s (no owner) and `bulk-import`'s (with it), and
 * the users file of that one user.
 */
async function writeImportFiles(dataset: string): Promise<{ own: string; owned: string; users: string; contacts: number }> {
  const files = {
    own: join(WORK, 'import-own.ndjson'),
    owned: join(WORK, 'import-owned.ndjson'),
    users: join(WORK, 'import-users.ndjson'),
  };
  const own = createWriteStream(files.own);
  const owned = createWriteStream(files.owned);
  let contacts = 0;
  for await (const line of createInterface({ input: createReadStream(join(dataset, 'contacts.ndjson'), 'utf8'), crlfDelay: Infinity })) {
    const { owner, ...contact } = JSON.parse(line) as { owner: string };
    if (owner !== BIG_USER_EMAIL) continue;
    if (!own.write(`${JSON.stringify(contact)}\n`)) await once(own, 'drain');
    if (!owned.write(`${line}\n`)) await once(owned, 'drain');
    contacts += 1;
  }
  own.end();
  owned.end();
  await Promise.all([once(own, 'finish'), once(owned, 'finish')]);
  writeFileSync(files.users, `${JSON.stringify({ email: BIG_USER_EMAIL, name: 'Big', plan: 'pro' })}\n`);
  return { ...files, contacts };
}

/** Times `contacts import` and `bulk-import` of the big network's contacts, each into an empty scratch database. */
async function measureImports(dataset: string, withPostgres: boolean): Promise<ImportTiming[]> {
  const files = await writeImportFiles(dataset);
  const scratches: { name: string; fresh: () => Promise<string> }[] = [
    {
      name: 'SQLite',
      fresh: async () => {
        const path = join(WORK, 'import-scratch.db');
        for (const suffix of ['', '-wal', '-shm']) rmSync(`${path}${suffix}`, { force: true });
        return `file:${path}`;
      },
    },
  ];
  if (withPostgres) scratches.push({ name: 'PostgreSQL', fresh: async () => (await postgresDatabase('contacts_bench_import', true)).url });
  const timings: ImportTiming[] = [];
  const timed = (database: string, command: string, url: string, cliArgs: string[]) => {
    const started = Date.now();
    cli(url, ...cliArgs);
    const seconds = (Date.now() - started) / 1000;
    log(`${database}: ${command} of ${files.contacts} contacts in ${seconds.toFixed(1)} s`);
    timings.push({ database, command, contacts: files.contacts, seconds });
  };
  for (const scratch of scratches) {
    log(`timing imports into ${scratch.name}`);
    let url = await scratch.fresh();
    cli(url, 'migrate');
    cli(url, 'users', 'create', '--email', BIG_USER_EMAIL, '--plan', 'pro');
    timed(scratch.name, '`contacts import`', url, ['contacts', 'import', '--user', BIG_USER_EMAIL, files.own]);
    url = await scratch.fresh();
    cli(url, 'migrate');
    timed(scratch.name, '`bulk-import`', url, ['bulk-import', '--users', files.users, '--contacts', files.owned]);
  }
  return timings;
}

function importTable(timings: ImportTiming[]): string {
  return [
    '| database | command | contacts | seconds | contacts/s |',
    '|---|---|---:|---:|---:|',
    ...timings.map(
      (t) =>
        `| ${t.database} | ${t.command} | ${t.contacts.toLocaleString('en')} | ${t.seconds.toFixed(1)} | ${Math.round(t.contacts / t.seconds).toLocaleString('en')} |`,
    ),
  ].join('\n');
}

interface RunningServer {
  /** The peak RSS of each worker (of the process, when it has none) since the last call or the start, in MB. */
  takePeaks(): number[];
  /** Stops the server; gives the peaks since the last takePeaks(). */
  stop(): Promise<number[]>;
}

/** Starts a server process and waits until it answers; tracks the peak RSS of it and its children. */
async function startServer(command: string, commandArgs: string[], env: NodeJS.ProcessEnv, port: number): Promise<RunningServer> {
  // The service's per-key rate limit would turn a load test into a test of 429s.
  const child: ChildProcess = spawn(command, commandArgs, {
    env: { ...process.env, ...env, PORT: String(port), LOG_LEVEL: 'warn', RATE_LIMIT_PER_MINUTE: '0' },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  let peaks = new Map<number, number>();
  const sample = () => {
    for (const pid of processTree(child.pid!)) {
      const rss = rssKb(pid);
      if (rss !== null) peaks.set(pid, Math.max(peaks.get(pid) ?? 0, rss));
    }
  };
  const deadline = Date.now() + 60_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`${command} ${commandArgs.join(' ')} exited with ${child.exitCode}`);
    if (await answers(port)) {
      // Cluster workers start one after the other: give the rest a moment to join.
      await sleep(1500);
      break;
    }
    if (Date.now() > deadline) throw new Error(`server on port ${port} did not start`);
    await sleep(200);
  }
  const timer = setInterval(sample, 200);
  const takePeaks = () => {
    sample();
    // Workers report separately; the primary of a cluster only forwards connections.
    const all = [...peaks.entries()];
    const workers = all.filter(([pid]) => pid !== child.pid);
    peaks = new Map();
    return (workers.length > 0 ? workers : all).map(([, kb]) => Math.round(kb / 1024));
  };
  return {
    takePeaks,
    stop: async () => {
      clearInterval(timer);
      const last = takePeaks();
      child.kill('SIGTERM');
      await new Promise((done) => child.once('exit', done));
      return last;
    },
  };
}

function processTree(pid: number): number[] {
  try {
    const children = readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8').trim().split(/\s+/).filter(Boolean).map(Number);
    return [pid, ...children.flatMap(processTree)];
  } catch {
    return [];
  }
}

function rssKb(pid: number): number | null {
  try {
    const match = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return match ? Number(match[1]) : null;
  } catch {
    return null;
  }
}

const sleep = (ms: number) => new Promise((done) => setTimeout(done, ms));

function answers(port: number): Promise<boolean> {
  return new Promise((done) => {
    const req = request({ host: '127.0.0.1', port, path: '/healthz', method: 'GET' }, (res) => {
      res.resume();
      done(true);
    });
    req.on('error', () => done(false));
    req.end();
  });
}

function wrk(
  port: number,
  script: string,
  env: Record<string, string>,
  options: { connections: number; seconds: number },
): { rps: number; p50: number; p99: number } {
  const output = execFileSync(
    'wrk',
    [
      '-t1',
      `-c${options.connections}`,
      `-d${options.seconds}s`,
      '--latency',
      '-s',
      join(ROOT, 'bench/wrk', script),
      `http://127.0.0.1:${port}`,
    ],
    {
      env: { ...process.env, ...env },
      encoding: 'utf8',
    },
  );
  const errors = /Non-2xx or 3xx responses: (\d+)/.exec(output);
  if (errors) throw new Error(`wrk saw ${errors[1]} error responses:\n${output}`);
  const latency = (percent: string) => {
    const match = new RegExp(`\\s${percent}%\\s+([\\d.]+)(us|ms|s)`).exec(output);
    if (!match) throw new Error(`no ${percent}% latency in wrk output:\n${output}`);
    return Number(match[1]) * { us: 0.001, ms: 1, s: 1000 }[match[2] as 'us' | 'ms' | 's'];
  };
  return { rps: Number(/Requests\/sec:\s+([\d.]+)/.exec(output)![1]), p50: latency('50'), p99: latency('99') };
}

/** One client walking every page in order, timing each request. */
async function walk(port: number, key: string): Promise<{ latencies: number[]; pages: number }> {
  const agent = new Agent({ keepAlive: true, maxSockets: 1 });
  const latencies: number[] = [];
  let offset: number | null = 0;
  while (offset !== null) {
    const started = process.hrtime.bigint();
    const body = await get(port, `/api/v1/contacts?limit=50&offset=${offset}`, key, agent);
    latencies.push(Number(process.hrtime.bigint() - started) / 1e6);
    offset = JSON.parse(body).pagination.nextOffset;
  }
  agent.destroy();
  return { latencies, pages: latencies.length };
}

/** Without `agent`, a connection of its own: a kept-alive socket left idle while wrk ran may be closed under a new request. */
function get(port: number, path: string, key: string, agent: Agent | false = false): Promise<string> {
  return new Promise((done, fail) => {
    const req = request({ host: '127.0.0.1', port, path, agent, headers: { authorization: `Bearer ${key}` } }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('end', () =>
        res.statusCode === 200 ? done(Buffer.concat(chunks).toString()) : fail(new Error(`GET ${path}: ${res.statusCode}`)),
      );
    });
    req.on('error', (error) => fail(new Error(`GET ${path}: ${error.message}`, { cause: error })));
    req.end();
  });
}

const mean = (values: number[]) => values.reduce((a, b) => a + b, 0) / values.length;

/**
 * Positions spread evenly over the owner's whole change log: the feed is walked from its start, 1,000 changes a
 * request, keeping each next_since. The first position is crafted (the log's start) the way the service makes them,
 * signed with the database's service key.
 */
async function feedTokens(port: number, key: string, databaseUrl: string): Promise<string[]> {
  const store = await openStore(parseDatabaseUrl(databaseUrl));
  const serviceKey = new ServiceKey(await store.oauth.secret(SERVICE_KEY_SECRET));
  await store.close();
  const current = decodeSyncToken(JSON.parse(await get(port, '/api/v1/contacts/changes', key)).next_since, serviceKey);
  const tokens = [encodeSyncToken({ ...current, seq: 0, after: null }, serviceKey)];
  for (;;) {
    const answer = JSON.parse(await get(port, `/api/v1/contacts/changes?limit=1000&since=${tokens.at(-1)}`, key));
    if (!answer.has_more) return tokens;
    tokens.push(answer.next_since);
  }
}

let bigNetwork = 0;
/** What a browser or an HTTP client library sends; rows measured with it say so, and compare with the compressed ceiling. */
const ACCEPT_ENCODING = 'gzip, br';
/**
 * A warm-up of "every page" reads the big network's pages in order, round after round, for this long: at scale 1 dozens
 * of rounds, past the 16 reads after which a worker keeps a page in Brotli or as it is.
 */
const SWEEP_SECONDS = 20;
const COMPRESSED = ` (${ACCEPT_ENCODING})`;

async function measureTarget(
  target: string,
  db: Database | null,
  start: () => Promise<RunningServer>,
  port: number,
  results: Measurement[],
  extra: { walk: boolean; feed?: boolean; compressed?: boolean },
): Promise<void> {
  log(`measuring ${target}`);
  const server = await start();
  const load = (
    scenario: string,
    script: string,
    env: Record<string, string>,
    options = { connections, seconds: duration },
    warmUp: 'once' | 'every page' = 'once',
  ) => {
    if (warmUp === 'every page') wrk(port, script, { ...env, ORDER: 'sequential' }, { ...options, seconds: SWEEP_SECONDS });
    wrk(port, script, env, { ...options, seconds: Number(args.warmup) });
    results.push({ target, scenario, ...wrk(port, script, env, options), peakRssMb: server.takePeaks() });
  };
  const big = `${Math.round(bigNetwork / 1000)}k network`;
  if (db === null) {
    load(`first page, ${big}${extra.compressed ? COMPRESSED : ''}`, 'first-page.lua', { KEY: 'ceiling' });
  } else {
    const randomPages = { KEY: db.bigKey, NETWORK: String(db.bigTotal) };
    load(`first page, ${big}`, 'first-page.lua', { KEY: db.bigKey });
    load(`first page, ${big}${COMPRESSED}`, 'first-page.lua', { KEY: db.bigKey, ACCEPT_ENCODING });
    // A worker keeps the pages it served compressed, as far as its cache holds them: random pages are measured once
    // every page has been read often enough for that, as on a service that has been up a while (random reads alone
    // take tens of seconds to meet every page on every worker).
    load(`random pages, ${big}`, 'random-page.lua', randomPages, undefined, 'every page');
    load(`random pages, ${big}${COMPRESSED}`, 'random-page.lua', { ...randomPages, ACCEPT_ENCODING }, undefined, 'every page');
    // The tail under saturation (issue 15): twice the connections of the other rows.
    load(`random pages, ${big}, ${connections * 2} connections`, 'random-page.lua', randomPages, {
      connections: connections * 2,
      seconds: duration,
    });
    load(
      `random pages, ${big}, 1 connection`,
      'random-page.lua',
      { KEY: db.bigKey, NETWORK: String(db.bigTotal) },
      { connections: 1, seconds: duration },
    );
    load('random pages, 1k network', 'random-page.lua', { KEY: db.smallKey, NETWORK: '950' });
    if (extra.feed) {
      const tokensFile = join(WORK, 'feed-tokens.txt');
      writeFileSync(tokensFile, `${(await feedTokens(port, db.bigKey, db.url)).join('\n')}\n`);
      const feed = { KEY: db.bigKey, TOKENS_FILE: tokensFile };
      load(`changes, 100 a request at random positions, ${big}`, 'changes.lua', feed);
      load(`changes, 100 a request at random positions, ${big}, 1 connection`, 'changes.lua', feed, { connections: 1, seconds: duration });
    }
    if (extra.walk) {
      const { latencies, pages } = await walk(port, db.bigKey);
      const first = mean(latencies.slice(0, 100));
      const last = mean(latencies.slice(-100));
      results.push({
        target,
        scenario: `sequential walk, ${pages} pages`,
        rps: 1000 / mean(latencies),
        p50: first,
        p99: last,
        note: `mean first 100 pages ${first.toFixed(2)} ms, last 100 ${last.toFixed(2)} ms: ratio ${(last / first).toFixed(2)}`,
        peakRssMb: server.takePeaks(),
      });
    }
  }
  await server.stop();
}

function table(results: Measurement[]): string {
  const ceilingOf = (row: Measurement) =>
    results.find((r) => r.target === (row.scenario.endsWith(COMPRESSED) ? 'ceiling (br)' : 'ceiling'))!.rps;
  const baselineOf = (row: Measurement) => {
    const kind = row.target.includes('PostgreSQL') ? 'PostgreSQL' : 'SQLite';
    return results.find((r) => r.target === `baseline (${kind})` && r.scenario === row.scenario)?.rps;
  };
  const lines = [
    '| target | scenario | req/s | p50 ms | p99 ms | peak RSS MB per worker, during the row | × ceiling | × baseline |',
    '|---|---|---:|---:|---:|---|---:|---:|',
  ];
  for (const row of results) {
    const baseline = baselineOf(row);
    const isWalk = row.scenario.startsWith('sequential');
    lines.push(
      `| ${row.target} | ${row.scenario}${row.note ? ` (${row.note})` : ''} | ${row.rps.toFixed(0)} | ${isWalk ? '—' : row.p50.toFixed(2)} | ${isWalk ? '—' : row.p99.toFixed(2)} | ${row.peakRssMb.join(', ')} | ${(row.rps / ceilingOf(row)).toFixed(2)} | ${baseline ? (row.rps / baseline).toFixed(1) : '—'} |`,
    );
  }
  return lines.join('\n');
}

/** The webhook scenario on scratch databases (SQLite, and PostgreSQL unless --no-postgres): its report section. */
async function webhookScenario(): Promise<string> {
  const figures = [];
  const path = join(WORK, 'webhooks-scratch.db');
  for (const suffix of ['', '-wal', '-shm']) rmSync(`${path}${suffix}`, { force: true });
  const databases = [{ name: 'SQLite', url: `file:${path}` }];
  if (!args['no-postgres']) databases.push({ name: 'PostgreSQL', url: (await postgresDatabase('contacts_bench_webhooks', true)).url });
  for (const { name, url } of databases) {
    cli(url, 'migrate');
    log(`measuring webhooks on ${name}`);
    figures.push(await measureWebhooks(name, url, BIN, WORK, 3901, log));
  }
  return [
    `Webhooks: \`serve\` (one worker per core) delivering to one receiver on loopback that answers 204 at once, on ${cpus().length} × ${cpus()[0]?.model ?? 'CPU'}, Node ${process.version}; the receiver, the writes and the imports run on the same machine. Events per second from the first event's arrival to the last; write → first attempt from a single-contact write's return to its event's arrival, ${200} writes 50 ms apart.`,
    '',
    webhookTable(figures),
  ].join('\n');
}

async function main(): Promise<void> {
  if (!existsSync(BIN)) throw new Error('dist/ is missing: run `npm run build` first');
  mkdirSync(WORK, { recursive: true });
  if (args['webhooks-only']) {
    const report = await webhookScenario();
    process.stdout.write(`${report}\n`);
    if (args.out) writeResultsSection(args.out, 'webhooks', `## Webhooks (issue 27)\n\n${report}`);
    return;
  }
  const dataset = await prepareDataset();
  const sqlitePath = join(WORK, `sqlite-${scale}.db`);
  const sqliteFresh = !existsSync(sqlitePath) || args.reload!;
  if (sqliteFresh && !args['no-sqlite']) rmSync(sqlitePath, { force: true });
  const databases: Database[] = [];
  if (!args['no-sqlite']) databases.push(await prepareDatabase('SQLite', `file:${sqlitePath}`, dataset, sqliteFresh));
  if (!args['no-postgres']) databases.push(await preparePostgres(dataset));
  if (args['load-only']) return;
  if (databases[0]?.name !== 'SQLite') throw new Error('a measured run needs SQLite: the ceiling sends its first page');

  const results: Measurement[] = [];
  const port = 3900;
  for (const db of databases) {
    db.bigTotal = JSON.parse(await getOnce(db, port)).pagination.total;
  }
  bigNetwork = databases[0]!.bigTotal;
  // The ceiling sends the service's own first page, byte for byte.
  const pageFile = join(WORK, 'first-page.json');
  await withService(databases[0]!, port, async () =>
    writeFileSync(pageFile, await get(port, '/api/v1/contacts?limit=50&offset=0', databases[0]!.bigKey)),
  );
  await measureTarget(
    'ceiling',
    null,
    () => startServer(TSX, [join(ROOT, 'bench/ceiling-server.ts')], { PAGE_FILE: pageFile }, port),
    port,
    results,
    { walk: false },
  );
  await measureTarget(
    'ceiling (br)',
    null,
    () => startServer(TSX, [join(ROOT, 'bench/ceiling-server.ts')], { PAGE_FILE: pageFile, ENCODING: 'br' }, port),
    port,
    results,
    { walk: false, compressed: true },
  );
  for (const db of databases) {
    db.diskBytes = await diskBytes(db);
    if (scale <= 1) {
      await measureTarget(
        `baseline (${db.name})`,
        db,
        () => startServer(TSX, [join(ROOT, 'bench/baseline-server.ts')], { DATABASE_URL: db.url }, port),
        port,
        results,
        { walk: true },
      );
    }
    const workers = args.workers ? ['--workers', args.workers] : [];
    await measureTarget(
      `service (${db.name})`,
      db,
      () => startServer(process.execPath, [BIN, 'serve', ...workers], { DATABASE_URL: db.url }, port),
      port,
      results,
      { walk: true, feed: true },
    );
  }

  const deepReads: { name: string; read: DeepRead }[] = [];
  for (const db of databases) deepReads.push({ name: db.name, read: await measureDeepRead(db.url, BIG_USER_EMAIL) });

  // Imports go into empty scratch databases: their rate does not depend on the scale, only their length does.
  const imports = scale <= 1 ? await measureImports(dataset, databases.length > 1) : [];
  const shape = shapeForScale(scale);
  const report = [
    `Machine: ${cpus().length} × ${cpus()[0]?.model ?? 'CPU'}, Node ${process.version}; wrk -t1 -c${connections}, ${duration} s per figure after ${args.warmup} s warm-up, on the same machine.`,
    `Dataset: scale ${scale} (${shape.contacts.toLocaleString('en')} contacts over ${shape.users.toLocaleString('en')} users); the big network lists ${databases[0]!.bigTotal.toLocaleString('en')} contacts.`,
    ...databases.map(
      (db) =>
        `${db.name}: ${(db.diskBytes / 2 ** 30).toFixed(2)} GiB on disk${db.loadSeconds === null ? ' (loaded by an earlier run)' : `, loaded through \`contacts-read-api bulk-import\` in ${db.loadSeconds.toFixed(1)} s (${Math.round(shape.contacts / db.loadSeconds).toLocaleString('en')} contacts/s)`}.`,
    ),
    ...(scale > 1 ? ['The baseline is not run above scale 1: its walk of the big network alone would take hours.'] : []),
    '',
    table(results),
    '',
    `The first read of a page near the end of the big network after a write (no sort keys remembered), in one process; the median of ${DEEP_READ_RUNS} fresh stores:`,
    '',
    '| database | read ms | longest event-loop block ms |',
    '|---|---:|---:|',
    ...deepReads.map(({ name, read }) => `| ${name} | ${read.readMs.toFixed(1)} | ${read.longestBlockMs.toFixed(1)} |`),
    ...(imports.length === 0
      ? []
      : [
          '',
          "Imports of the big network's contacts, each into an empty scratch database (the command's whole run, start to exit):",
          '',
          importTable(imports),
        ]),
  ].join('\n');
  process.stdout.write(`${report}\n`);
  const webhooks = await webhookScenario();
  process.stdout.write(`\n${webhooks}\n`);
  if (args.out) writeResultsSection(args.out, 'webhooks', `## Webhooks (issue 27)\n\n${webhooks}`);
  const figures: ScaleFigures = {
    scale,
    databases: databases.map(({ name, diskBytes: bytes, loadSeconds }) => ({ name, diskBytes: bytes, loadSeconds })),
    results,
  };
  writeFileSync(join(WORK, `results-${scale}.json`), JSON.stringify(figures));
  const others = readdirSync(WORK)
    .filter((file) => /^results-[\d.]+\.json$/.test(file) && file !== `results-${scale}.json`)
    .map((file) => JSON.parse(readFileSync(join(WORK, file), 'utf8')) as ScaleFigures);
  const comparison = others.length > 0 ? scaleComparison([...others, figures].sort((a, b) => a.scale - b.scale)) : null;
  if (comparison) process.stdout.write(`\n${comparison}\n`);
  if (args.out) {
    writeResultsSection(args.out, scale === 1 ? 'run' : `run-scale-${scale}`, report);
    if (comparison) writeResultsSection(args.out, 'scales', comparison);
  }
  // CardDAV syncs a 10,000-contact network of its own, whatever the scale (bench/carddav.ts).
  const carddav = await measureCarddav(args['no-postgres'] ? null : args.postgres!);
  process.stdout.write(`\n${carddav}\n`);
  if (args.out) writeResultsSection(args.out, 'carddav', carddav);
}

interface ScaleFigures {
  scale: number;
  databases: { name: string; diskBytes: number; loadSeconds: number | null }[];
  results: Measurement[];
}

/** Growth past which a figure must be explained or fixed (issue 15). */
const GROWTH_LIMIT = 1.5;
/** Every scenario but the walk, whose length grows with the network by design. */
const comparedAcrossScales = (row: Measurement) => row.target.startsWith('service') && !row.scenario.startsWith('sequential walk');

/** The service's latencies at the smallest and largest scale measured, side by side, with how much each grew. */
function scaleComparison(runs: ScaleFigures[]): string {
  const [small, large] = [runs[0]!, runs.at(-1)!];
  // The ceiling's one scenario names the big network as that run measured it ("99k network").
  const bigNetworkOf = (run: ScaleFigures) => run.results.find((r) => r.target === 'ceiling')!.scenario.replace(/^first page, /, '');
  const [smallBig, largeBig] = [bigNetworkOf(small), bigNetworkOf(large)];
  const bigName = (scenario: string) => scenario.replace(smallBig, 'big network').replace(largeBig, 'big network');
  // wrk leaves out requests that time out (2 s): a run with none answered has no latency to compare.
  const latency = (run: Measurement, value: number) => (run.rps === 0 ? '—' : value.toFixed(2));
  const lines = [
    `| service | scenario | p50 ms, scale ${small.scale} | p50 ms, scale ${large.scale} | p99 ms, scale ${small.scale} | p99 ms, scale ${large.scale} | req/s, scale ${small.scale} | req/s, scale ${large.scale} | p99 growth |`,
    '|---|---|---:|---:|---:|---:|---:|---:|---:|',
  ];
  for (const row of small.results.filter(comparedAcrossScales)) {
    const other = large.results.find((r) => r.target === row.target && bigName(r.scenario) === bigName(row.scenario));
    if (!other) continue;
    const growth = other.p99 / row.p99;
    const growthCell =
      other.rps === 0 || row.rps === 0
        ? '**none answered**'
        : growth > GROWTH_LIMIT
          ? `**${growth.toFixed(2)}×**`
          : `${growth.toFixed(2)}×`;
    lines.push(
      `| ${row.target} | ${bigName(row.scenario)} | ${latency(row, row.p50)} | ${latency(other, other.p50)} | ${latency(row, row.p99)} | ${latency(other, other.p99)} | ${row.rps.toFixed(0)} | ${other.rps.toFixed(0)} | ${growthCell} |`,
    );
  }
  const gib = (bytes: number) => `${(bytes / 2 ** 30).toFixed(2)} GiB`;
  const load = (seconds: number | null) => (seconds === null ? 'loaded earlier' : `${seconds.toFixed(0)} s`);
  lines.push(
    '',
    `| database | disk, scale ${small.scale} | disk, scale ${large.scale} | load, scale ${small.scale} | load, scale ${large.scale} |`,
    '|---|---:|---:|---:|---:|',
  );
  for (const db of small.databases) {
    const other = large.databases.find((d) => d.name === db.name);
    if (other)
      lines.push(`| ${db.name} | ${gib(db.diskBytes)} | ${gib(other.diskBytes)} | ${load(db.loadSeconds)} | ${load(other.loadSeconds)} |`);
  }
  return lines.join('\n');
}

async function getOnce(db: Database, port: number): Promise<string> {
  let body = '';
  await withService(db, port, async () => {
    body = await get(port, '/api/v1/contacts?limit=1', db.bigKey);
  });
  return body;
}

async function withService(db: Database, port: number, action: () => Promise<void>): Promise<void> {
  const server = await startServer(process.execPath, [BIN, 'serve'], { DATABASE_URL: db.url }, port);
  try {
    await action();
  } finally {
    await server.stop();
  }
}

await main();
