/**
 * The benchmark: loads the deterministic dataset into SQLite and PostgreSQL through the CLI's bulk path, then
 * measures, side by side in one run and with an external load generator (wrk), the transport ceilings, the "competent
 * first try" baseline and this service. The headline figure of every row is its CPU per request: the CPU time of the
 * server's processes (and, on PostgreSQL, of the database's) over the measured run, divided by the requests answered,
 * printed beside the ratio to the ceiling that sends the same bytes (bench/proc-stat.ts).
 *
 * The service runs as a production deployment does: `serve --workers 2`, the request log on (LOG_LEVEL=info, into a file
 * under .bench, counted in lines per request), the rate limit on at its highest setting, metrics and security headers
 * as by default.
 *
 * It also times imports of the big network's contacts into scratch databases, measures the service's first seconds
 * after start-up right after one, and, at every scale, keeps its figures in `.bench/results-<scale>.json` so that a run
 * at another scale prints both side by side.
 *
 *   npm run bench -- [--scale 1] [--duration 8] [--warmup 3] [--connections 32] [--workers 2] [--bin PATH]
 *                    [--rows hot,random] [--no-baseline] [--no-imports] [--no-startup] [--no-webhooks] [--no-carddav]
 *                    [--no-walk] [--no-feed] [--no-deep] [--no-postgres] [--no-sqlite] [--db-prefix contacts_bench_]
 *                    [--reload] [--load-only] [--webhooks-only] [--out docs/benchmarks.md]
 *
 * `--bin` runs another build's dist/cli/main.js (every command and server the bench starts), for before/after runs.
 * `--rows` keeps only the listed rows (hot, hot-gzip, hot-br, random, random-br, random-2x, random-1c, small, mcp-2025,
 * mcp-2026, feed, walk; a name also keeps the rows it begins: `hot` keeps hot-gzip and hot-br, `mcp` both MCP rows).
 * The ceilings always run.
 * `--webhooks-only` runs only the webhook scenario (bench/webhooks.ts), on scratch databases of its own.
 * `--load-only` generates and loads what is missing, then stops; a later run reuses the databases and reports how long
 * their load took (kept in `.bench/load-<database>-<scale>.json`).
 *
 * The baseline (a first try's OFFSET queries) runs at scale 1 and below only: its walk of a 1M-contact network would take
 * hours. Last, it measures CardDAV syncs of a 10,000-contact network by vdirsyncer and a DAVx5-style client.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { cpus } from 'node:os';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { measureCarddav } from './carddav.js';
import { type Database, diskBytes, postgresDatabase, prepareDatabase, prepareDataset, preparePostgres } from './databases.js';
import { BIG_USER_EMAIL, shapeForScale } from './dataset.js';
import { DEEP_READ_RUNS, measureDeepRead, type DeepRead } from './deep-read.js';
import { saveCeilingPages } from './ceiling-pages.js';
import { importTable, measureImports, startupTable } from './imports.js';
import { requireWrk } from './wrk-run.js';
import { get, measureTarget, type RowsContext } from './listing-rows.js';
import { postgresProcesses } from './proc-stat.js';
import { CEILING_TARGETS, scaleComparison, table, type Coding, type Measurement, type ScaleFigures } from './report.js';
import { writeResultsSection } from './results-file.js';
import { startServer, type RunningServer } from './server-under-test.js';
import { webhookScenario } from './webhook-section.js';

const { values: args } = parseArgs({
  options: {
    scale: { type: 'string', default: '1' },
    duration: { type: 'string', default: '8' },
    warmup: { type: 'string', default: '3' },
    sweep: { type: 'string', default: '20' },
    connections: { type: 'string', default: '32' },
    workers: { type: 'string', default: '2' },
    bin: { type: 'string' },
    rows: { type: 'string' },
    postgres: { type: 'string', default: 'postgres://postgres@127.0.0.1:5432/postgres' },
    'db-prefix': { type: 'string', default: 'contacts_bench_' },
    'no-postgres': { type: 'boolean', default: false },
    'no-sqlite': { type: 'boolean', default: false },
    'no-baseline': { type: 'boolean', default: false },
    'no-imports': { type: 'boolean', default: false },
    'no-startup': { type: 'boolean', default: false },
    'no-webhooks': { type: 'boolean', default: false },
    'no-carddav': { type: 'boolean', default: false },
    'no-walk': { type: 'boolean', default: false },
    'no-feed': { type: 'boolean', default: false },
    'no-deep': { type: 'boolean', default: false },
    'load-only': { type: 'boolean', default: false },
    'webhooks-only': { type: 'boolean', default: false },
    reload: { type: 'boolean', default: false },
    out: { type: 'string' },
  },
});

const ROOT = resolve(import.meta.dirname, '..');
const BIN = resolve(args.bin ?? join(ROOT, 'dist/cli/main.js'));
// Servers the bench starts through bench/serve-process.ts (CardDAV) take the same build.
process.env.BENCH_BIN = BIN;
const WORK = join(ROOT, '.bench');
const TSX = join(ROOT, 'node_modules/.bin/tsx');
const PORT = 3900;
const scale = Number(args.scale);
const duration = Number(args.duration);
const connections = Number(args.connections);
/** What a production deployment has on: the request log, and the rate limit at its highest (nothing meets it). */
const PRODUCTION_ENV = { LOG_LEVEL: 'info', RATE_LIMIT_PER_MINUTE: '1000000' };

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

const databaseContext = {
  work: WORK,
  scale,
  reload: args.reload!,
  postgresAdminUrl: args.postgres!,
  prefix: args['db-prefix']!,
  cli,
  log,
};

const selectedRows = args.rows?.split(',').map((row) => row.trim());
const rowsContext: RowsContext = {
  port: PORT,
  connections,
  duration,
  warmup: Number(args.warmup),
  sweepSeconds: Number(args.sweep),
  runs: (row) => selectedRows === undefined || selectedRows.some((wanted) => row === wanted || row.startsWith(`${wanted}-`)),
  work: WORK,
  log,
};

/** `serve` as the service rows run it, its request log appended to a file under .bench. */
async function startService(url: string, workers = args.workers!): Promise<RunningServer> {
  return startServer(process.execPath, [BIN, 'serve', '--workers', workers], {
    env: { DATABASE_URL: url, ...PRODUCTION_ENV },
    port: PORT,
    logFile: join(WORK, 'service.log'),
    databaseProcesses: url.startsWith('postgres') ? await postgresProcesses(url) : null,
  });
}

/** A quiet one-worker service for set-up reads (totals, the ceilings' bytes). */
async function withService(db: Database, action: () => Promise<void>): Promise<void> {
  const server = await startServer(process.execPath, [BIN, 'serve', '--workers', '1'], {
    env: { DATABASE_URL: db.url, LOG_LEVEL: 'warn', RATE_LIMIT_PER_MINUTE: '0' },
    port: PORT,
  });
  try {
    await action();
  } finally {
    await server.stop();
  }
}

async function main(): Promise<void> {
  if (!existsSync(BIN)) throw new Error(`${BIN} is missing: run \`npm run build\` first`);
  mkdirSync(WORK, { recursive: true });
  const webhooks = () => webhookScenario({ ...databaseContext, bin: BIN, withPostgres: !args['no-postgres'], port: PORT + 1 });
  if (args['webhooks-only']) {
    const report = await webhooks();
    process.stdout.write(`${report}\n`);
    if (args.out) writeResultsSection(args.out, 'webhooks', `## Webhooks (issue 27)\n\n${report}`);
    return;
  }
  const dataset = await prepareDataset(databaseContext);
  const sqlitePath = join(WORK, `sqlite-${scale}.db`);
  const sqliteFresh = !existsSync(sqlitePath) || args.reload!;
  if (sqliteFresh && !args['no-sqlite']) for (const suffix of ['', '-wal', '-shm']) rmSync(`${sqlitePath}${suffix}`, { force: true });
  const databases: Database[] = [];
  if (!args['no-sqlite']) databases.push(await prepareDatabase(databaseContext, 'SQLite', `file:${sqlitePath}`, dataset, sqliteFresh));
  if (!args['no-postgres']) databases.push(await preparePostgres(databaseContext, dataset));
  if (args['load-only']) return;
  if (databases.length === 0) throw new Error('nothing to measure: both databases are left out');
  requireWrk();

  for (const db of databases) {
    await withService(db, async () => {
      db.bigTotal = JSON.parse(await get(PORT, '/api/v1/contacts?limit=1', db.bigKey)).pagination.total;
    });
  }
  const bigNetwork = databases[0]!.bigTotal;
  // The ceilings send the service's own first page, byte for byte, as it is and in each coding.
  const pages = await saveCeilingPages(WORK, databases[0]!, (action) => withService(databases[0]!, action), PORT, log);

  const results: Measurement[] = [];
  for (const coding of ['identity', 'gzip', 'br'] as Coding[]) {
    const env = { PAGE_FILE: pages[coding], ...(coding === 'identity' ? {} : { ENCODING: coding }) };
    const server = await startServer(TSX, [join(ROOT, 'bench/ceiling-server.ts')], { env, port: PORT });
    results.push(...(await measureTarget(rowsContext, CEILING_TARGETS[coding], null, server, bigNetwork, { coding })));
    await server.stop();
  }
  const lastRss: { name: string; mb: number[] }[] = [];
  for (const db of databases) {
    db.diskBytes = await diskBytes(db);
    const databaseProcesses = db.url.startsWith('postgres') ? await postgresProcesses(db.url) : null;
    if (scale <= 1 && !args['no-baseline']) {
      const server = await startServer(TSX, [join(ROOT, 'bench/baseline-server.ts')], {
        env: { DATABASE_URL: db.url },
        port: PORT,
        databaseProcesses,
      });
      results.push(...(await measureTarget(rowsContext, `baseline (${db.name})`, db, server, bigNetwork, { walk: !args['no-walk'] })));
      await server.stop();
    }
    const server = await startService(db.url);
    results.push(
      ...(await measureTarget(rowsContext, `service (${db.name})`, db, server, bigNetwork, {
        walk: !args['no-walk'],
        feed: !args['no-feed'],
      })),
    );
    lastRss.push({ name: db.name, mb: (await server.stop()).lastRssMb });
  }

  const deepReads: { name: string; read: DeepRead }[] = [];
  if (!args['no-deep']) for (const db of databases) deepReads.push({ name: db.name, read: await measureDeepRead(db.url, BIG_USER_EMAIL) });

  // Imports go into empty scratch databases: their rate does not depend on the scale, only their length does.
  const imports =
    scale <= 1 && !args['no-imports']
      ? await measureImports(
          {
            work: WORK,
            bin: BIN,
            cli,
            scratchPostgres: args['no-postgres'] ? null : async (suffix) => (await postgresDatabase(databaseContext, suffix, true)).url,
            startService: (url) => startService(url),
            port: PORT,
            connections,
            duration,
            startup: !args['no-startup'],
            log,
          },
          dataset,
        )
      : { timings: [], startup: [] };
  const shape = shapeForScale(scale);
  const report = [
    `Machine: ${cpus().length} × ${cpus()[0]?.model ?? 'CPU'}, Node ${process.version}; wrk -t1 -c${connections}, ${duration} s per figure after ${args.warmup} s warm-up, on the same machine; \`serve --workers ${args.workers}\` with LOG_LEVEL=info and RATE_LIMIT_PER_MINUTE=1000000.`,
    `Dataset: scale ${scale} (${shape.contacts.toLocaleString('en')} contacts over ${shape.users.toLocaleString('en')} users); the big network lists ${bigNetwork.toLocaleString('en')} contacts.`,
    `The ceilings send the service's first page: ${(['identity', 'gzip', 'br'] as Coding[]).map((coding) => `${coding === 'identity' ? 'as it is' : coding} ${pages.sizes[coding].toLocaleString('en')} bytes`).join(', ')}.`,
    ...databases.map(
      (db) =>
        `${db.name}: ${(db.diskBytes / 2 ** 30).toFixed(2)} GiB on disk${db.loadSeconds === null ? ' (loaded by an earlier run)' : `, loaded through \`contacts-read-api bulk-import\` in ${db.loadSeconds.toFixed(1)} s (${Math.round(shape.contacts / db.loadSeconds).toLocaleString('en')} contacts/s)`}.`,
    ),
    ...(scale > 1 ? ['The baseline is not run above scale 1: its walk of the big network alone would take hours.'] : []),
    '',
    table(results),
    '',
    `Worker RSS right before the service stopped after its last row: ${lastRss.map(({ name, mb }) => `${name} ${mb.join(', ')} MB`).join('; ')}.`,
    ...(deepReads.length === 0
      ? []
      : [
          '',
          `The first read of a page near the end of the big network after a write (no sort keys remembered), in one process; the median of ${DEEP_READ_RUNS} fresh stores:`,
          '',
          '| database | read ms | longest event-loop block ms |',
          '|---|---:|---:|',
          ...deepReads.map(({ name, read }) => `| ${name} | ${read.readMs.toFixed(1)} | ${read.longestBlockMs.toFixed(1)} |`),
        ]),
    ...(imports.timings.length === 0
      ? []
      : [
          '',
          "Imports of the big network's contacts, each into an empty scratch database (the command's whole run, start to exit; CPU of the command's process and, on PostgreSQL, of the database's processes):",
          '',
          importTable(imports.timings),
        ]),
    ...(imports.startup.length === 0
      ? []
      : [
          '',
          `The first ${duration} s after start-up: \`serve --workers ${args.workers}\` started right after \`contacts import\` of the big network into an empty database, random pages at ${connections} connections with no warm-up:`,
          '',
          startupTable(imports.startup),
        ]),
  ].join('\n');
  process.stdout.write(`${report}\n`);
  if (!args['no-webhooks']) {
    const section = await webhooks();
    process.stdout.write(`\n${section}\n`);
    if (args.out) writeResultsSection(args.out, 'webhooks', `## Webhooks (issue 27)\n\n${section}`);
  }
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
  if (!args['no-carddav']) {
    // CardDAV syncs a 10,000-contact network of its own, whatever the scale (bench/carddav.ts).
    const carddav = await measureCarddav(args['no-postgres'] ? null : args.postgres!, `${args['db-prefix']}carddav`);
    process.stdout.write(`\n${carddav}\n`);
    if (args.out) writeResultsSection(args.out, 'carddav', carddav);
  }
}

await main();
