/**
 * CardDAV: what syncing a 10,000-contact network costs, as two clients someone else wrote fetch it: Debian's vdirsyncer
 * (one PROPFIND of every ETag, then one addressbook-multiget of what differs) and DAVx5's request sequence sent
 * through python3-caldav (sync-collection, then addressbook-multiget of 10 cards at a time). For each database: a full
 * sync, then 100 changes through the CLI (50 edits by import, 25 merges, 25 deletes), then the incremental sync. Time is
 * the client's whole run, start to exit; bytes are bodies on the wire, through a recorder between client and server.
 *
 *   npx tsx bench/carddav.ts [--no-postgres] [--postgres URL] [--out docs/benchmarks.md]
 *
 * `npm run bench` runs it too, after the listing (section `carddav` of the results file).
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { cpus, tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import pg from 'pg';
import { openStore } from '../src/store/open-store.js';
import { parseDatabaseUrl } from '../src/domain/database-url.js';
import { changeNetwork, seedCarddavNetwork, type CarddavNetwork } from '../test/support/carddav-network.js';
import { startDavRecorder, trafficOf, type DavRecorder, type DavTraffic } from '../test/support/dav-recorder.js';
import { caldavInstalled, runDavx5Style } from '../test/support/davx5-style.js';
import { setUpVdirsyncer, vdirsyncerDirectory, vdirsyncerInstalled, type VdirsyncerSetup } from '../test/support/vdirsyncer.js';
import { writeResultsSection } from './results-file.js';
import { startServe } from './serve-process.js';

const NETWORK = 10_000;
const DUPLICATES = 25;
const CHANGES = { edits: 50, merges: 25, deletes: 25 };

interface SyncFigure {
  database: string;
  client: string;
  sync: string;
  seconds: number;
  traffic: DavTraffic;
}

interface Client {
  name: string;
  /** Discovery and anything else before the first sync; not measured. */
  prepare(): Promise<void>;
  sync(): Promise<void>;
}

function log(message: string): void {
  process.stderr.write(`[bench:carddav] ${message}\n`);
}

async function vdirsyncerClient(dir: string, recorder: DavRecorder, network: CarddavNetwork): Promise<Client> {
  const setup: VdirsyncerSetup = await setUpVdirsyncer(dir, recorder.url, network.email, network.key);
  const run = async (command: string) => {
    const result = await setup.run(command);
    if (result.code !== 0) throw new Error(`vdirsyncer ${command} failed: ${result.stderr}`);
  };
  return { name: 'vdirsyncer 0.19 (Debian)', prepare: () => run('discover'), sync: () => run('sync') };
}

function davx5Client(dir: string, recorder: DavRecorder, network: CarddavNetwork): Client {
  const state = join(dir, 'davx5.json');
  const account = { baseUrl: recorder.url, username: network.email, password: network.key };
  const run = async (command: 'discover' | 'sync') => {
    const result = await runDavx5Style<{ error?: string }>(state, command, account);
    if (result.error) throw new Error(`DAVx5-style ${command}: ${result.error}`);
  };
  return { name: 'DAVx5 sequence (python3-caldav)', prepare: () => run('discover'), sync: () => run('sync') };
}

async function timedSync(client: Client, recorder: DavRecorder): Promise<{ seconds: number; traffic: DavTraffic }> {
  recorder.take();
  const started = performance.now();
  await client.sync();
  const seconds = (performance.now() - started) / 1000;
  return { seconds, traffic: trafficOf(recorder.take()) };
}

/** Seeds a fresh database, serves it and measures every installed client's full and incremental sync. */
async function measureDatabase(name: string, databaseUrl: string): Promise<SyncFigure[]> {
  const store = await openStore(parseDatabaseUrl(databaseUrl));
  await store.migrate();
  await store.close();
  log(`${name}: seeding ${NETWORK.toLocaleString('en')} contacts and ${DUPLICATES} merged duplicates through the CLI`);
  const network = await seedCarddavNetwork(databaseUrl, NETWORK, DUPLICATES);
  // A DAVx5 first sync of 10,000 cards is about 1,000 requests: over the default limit of 600 a minute (see the report).
  const server = await startServe({
    ...process.env,
    DATABASE_URL: databaseUrl,
    LOG_LEVEL: 'warn',
    WORKERS: '1',
    RATE_LIMIT_PER_MINUTE: '0',
  });
  const recorder = await startDavRecorder(server.url);
  const dir = await mkdtemp(join(tmpdir(), 'contacts-bench-carddav-'));
  const vdirsyncerDir = await vdirsyncerDirectory();
  const figures: SyncFigure[] = [];
  try {
    const clients: Client[] = [];
    if (vdirsyncerInstalled()) clients.push(await vdirsyncerClient(vdirsyncerDir, recorder, network));
    else log('vdirsyncer is not installed: skipped (apt-get install vdirsyncer)');
    if (caldavInstalled()) clients.push(davx5Client(dir, recorder, network));
    else log('python3-caldav is not installed: skipped (apt-get install python3-caldav)');
    for (const client of clients) {
      await client.prepare();
      log(`${name}: ${client.name}, full sync`);
      figures.push({
        database: name,
        client: client.name,
        sync: `full, ${NETWORK.toLocaleString('en')} cards`,
        ...(await timedSync(client, recorder)),
      });
    }
    await changeNetwork(databaseUrl, server.url, network, CHANGES);
    for (const client of clients) {
      log(`${name}: ${client.name}, incremental sync`);
      figures.push({ database: name, client: client.name, sync: 'after 100 changes', ...(await timedSync(client, recorder)) });
    }
  } finally {
    await recorder.close();
    await server.stop();
    await rm(dir, { recursive: true, force: true });
    await rm(vdirsyncerDir, { recursive: true, force: true });
  }
  return figures;
}

async function withScratchPostgres<T>(adminUrl: string, name: string, action: (url: string) => Promise<T>): Promise<T> {
  const admin = new pg.Client({ connectionString: adminUrl });
  await admin.connect();
  await admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
  await admin.query(`CREATE DATABASE ${name}`);
  const url = new URL(adminUrl);
  url.pathname = `/${name}`;
  try {
    return await action(url.toString());
  } finally {
    await admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
    await admin.end();
  }
}

function report(figures: SyncFigure[]): string {
  const kb = (bytes: number) => `${(bytes / 1024).toLocaleString('en', { maximumFractionDigits: 0 })}`;
  const methods = (traffic: DavTraffic) =>
    Object.entries(traffic.methods)
      .map(([method, count]) => `${count} ${method}`)
      .join(', ');
  const encodings = [...new Set(figures.flatMap(({ traffic }) => Object.keys(traffic.encodings)))].join(', ');
  return [
    `Measured ${new Date().toISOString().slice(0, 10)} on ${cpus().length} × ${cpus()[0]?.model ?? 'CPU'}, Node ${process.version}; client, recorder and \`serve\` (1 worker) on the same machine.`,
    `A network of ${NETWORK.toLocaleString('en')} listed contacts (plus ${DUPLICATES} merged duplicates and the self row, never cards), seeded through the CLI;`,
    `between the two syncs ${CHANGES.edits} edits by \`contacts import\`, ${CHANGES.merges} \`contacts merge\` and ${CHANGES.deletes} deletes in one \`contacts delete\`.`,
    `Seconds are the client's whole run, and of it the requests' (first byte in to last byte out at the recorder); KiB are bodies on the wire (response encodings seen: ${encodings}); cards = hrefs asked for by addressbook-multiget or GET.`,
    '',
    '| database | client | sync | seconds | in requests | requests | cards fetched | KiB received | KiB sent |',
    '|---|---|---|---:|---:|---|---:|---:|---:|',
    ...figures.map(
      ({ database, client, sync, seconds, traffic }) =>
        `| ${database} | ${client} | ${sync} | ${seconds.toFixed(1)} | ${(traffic.exchangeMs / 1000).toFixed(1)} | ${traffic.requests} (${methods(traffic)}) | ${traffic.cardsAsked.toLocaleString('en')} | ${kb(traffic.responseBytes)} | ${kb(traffic.requestBytes)} |`,
    ),
  ].join('\n');
}

/** Runs the measurements on SQLite (a scratch file) and, unless `postgresAdminUrl` is null, on a scratch PostgreSQL. */
export async function measureCarddav(postgresAdminUrl: string | null, databaseName = 'contacts_bench_carddav'): Promise<string> {
  const figures: SyncFigure[] = [];
  const dir = await mkdtemp(join(tmpdir(), 'contacts-bench-carddav-db-'));
  try {
    figures.push(...(await measureDatabase('SQLite', `file:${join(dir, 'carddav.db')}`)));
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
  if (postgresAdminUrl !== null)
    figures.push(...(await withScratchPostgres(postgresAdminUrl, databaseName, (url) => measureDatabase('PostgreSQL', url))));
  return report(figures);
}

if (import.meta.filename === process.argv[1]) {
  const { values: args } = parseArgs({
    options: {
      postgres: { type: 'string', default: 'postgres://postgres@127.0.0.1:5432/postgres' },
      'no-postgres': { type: 'boolean', default: false },
      out: { type: 'string' },
    },
  });
  const text = await measureCarddav(args['no-postgres'] ? null : args.postgres!);
  process.stdout.write(`${text}\n`);
  if (args.out) writeResultsSection(args.out, 'carddav', text);
}
