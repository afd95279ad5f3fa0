/**
 * Imports of the big network's contacts into empty scratch databases, timed and counted in CPU (the importing
 * process's and, on PostgreSQL, the database's), and the first seconds of a service started right after
 * `contacts import`: random pages with no warm-up.
 */
import { execFile } from 'node:child_process';
import { once } from 'node:events';
import { createReadStream, createWriteStream, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { promisify } from 'node:util';
import { BIG_USER_EMAIL } from './dataset.js';
import { postgresProcesses, trackCpu, waitedChildrenSeconds } from './proc-stat.js';
import type { RunningServer } from './server-under-test.js';
import { wrk } from './wrk-run.js';

export interface ImportContext {
  work: string;
  /** The CLI under test: `node <bin>`. */
  bin: string;
  /** Runs the CLI against a database, to its end. */
  cli(databaseUrl: string, ...cliArgs: string[]): string;
  /** An empty PostgreSQL database (dropped and made again); null without PostgreSQL. */
  scratchPostgres: ((name: string) => Promise<string>) | null;
  /** Starts `serve` as the service rows run it. */
  startService(databaseUrl: string): Promise<RunningServer>;
  port: number;
  connections: number;
  duration: number;
  /** Whether to measure the first seconds after start-up. */
  startup: boolean;
  log(message: string): void;
}

export interface ImportTiming {
  database: string;
  command: string;
  contacts: number;
  seconds: number;
  /** CPU seconds of the importing process (and the processes it waited for). */
  cpuSeconds: number;
  /** CPU seconds of the database's processes, on PostgreSQL. */
  dbCpuSeconds: number | null;
}

export interface StartupFigure {
  database: string;
  rps: number;
  p50: number;
  p99: number;
  cpuUs: number;
  dbCpuUs: number | null;
}

/**
 * The big network's contacts as two import files: `contacts import`'s (no owner) and `bulk-import`'s (with it), and
 * the users file of that one user.
 */
async function writeImportFiles(work: string, dataset: string): Promise<{ own: string; owned: string; users: string; contacts: number }> {
  const files = {
    own: join(work, 'import-own.ndjson'),
    owned: join(work, 'import-owned.ndjson'),
    users: join(work, 'import-users.ndjson'),
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

/**
 * Times `contacts import` and `bulk-import` of the big network's contacts, each into an empty scratch database; right
 * after `contacts import`, starts the service and measures random pages with no warm-up.
 */
export async function measureImports(
  context: ImportContext,
  dataset: string,
): Promise<{ timings: ImportTiming[]; startup: StartupFigure[] }> {
  const { work, log, cli } = context;
  const files = await writeImportFiles(work, dataset);
  const scratches: { name: string; fresh: () => Promise<string> }[] = [
    {
      name: 'SQLite',
      fresh: async () => {
        const path = join(work, 'import-scratch.db');
        for (const suffix of ['', '-wal', '-shm']) rmSync(`${path}${suffix}`, { force: true });
        return `file:${path}`;
      },
    },
  ];
  const scratchPostgres = context.scratchPostgres;
  if (scratchPostgres) scratches.push({ name: 'PostgreSQL', fresh: () => scratchPostgres('import') });
  const timings: ImportTiming[] = [];
  const startup: StartupFigure[] = [];
  const timed = async (database: string, command: string, url: string, cliArgs: string[]) => {
    const databaseProcesses = url.startsWith('postgres') ? await postgresProcesses(url) : null;
    const db = databaseProcesses ? trackCpu(databaseProcesses) : null;
    const [started, cpuBefore] = [Date.now(), waitedChildrenSeconds()];
    await promisify(execFile)(process.execPath, [context.bin, ...cliArgs], {
      env: { ...process.env, DATABASE_URL: url, LOG_LEVEL: 'warn' },
      maxBuffer: 64 * 1024 * 1024,
    });
    const seconds = (Date.now() - started) / 1000;
    const timing = {
      database,
      command,
      contacts: files.contacts,
      seconds,
      cpuSeconds: waitedChildrenSeconds() - cpuBefore,
      dbCpuSeconds: db?.stop() ?? null,
    };
    log(`${database}: ${command} of ${files.contacts} contacts in ${seconds.toFixed(1)} s, ${timing.cpuSeconds.toFixed(1)} CPU s`);
    timings.push(timing);
  };
  for (const scratch of scratches) {
    log(`timing imports into ${scratch.name}`);
    let url = await scratch.fresh();
    cli(url, 'migrate');
    cli(url, 'users', 'create', '--email', BIG_USER_EMAIL, '--plan', 'pro');
    const key = (JSON.parse(cli(url, 'keys', 'create', '--user', BIG_USER_EMAIL, '--label', 'bench', '--json')) as { key: string }).key;
    await timed(scratch.name, '`contacts import`', url, ['contacts', 'import', '--user', BIG_USER_EMAIL, files.own]);
    if (context.startup) startup.push(await firstSeconds(context, scratch.name, url, key, files.contacts));
    url = await scratch.fresh();
    cli(url, 'migrate');
    await timed(scratch.name, '`bulk-import`', url, ['bulk-import', '--users', files.users, '--contacts', files.owned]);
  }
  return { timings, startup };
}

/** The service started at once after an import: random pages for the measured duration, no warm-up. */
async function firstSeconds(context: ImportContext, database: string, url: string, key: string, network: number): Promise<StartupFigure> {
  context.log(`${database}: random pages in the first ${context.duration} s after start-up`);
  const server = await context.startService(url);
  const { result, cpuSeconds, dbCpuSeconds } = await server.measure(() =>
    wrk(
      context.port,
      'random-page.lua',
      { KEY: key, NETWORK: String(network) },
      { connections: context.connections, seconds: context.duration },
    ),
  );
  await server.stop();
  const perRequest = (seconds: number) => (seconds * 1e6) / Math.max(1, result.requests);
  return {
    database,
    rps: result.rps,
    p50: result.p50,
    p99: result.p99,
    cpuUs: perRequest(cpuSeconds + (dbCpuSeconds ?? 0)),
    dbCpuUs: dbCpuSeconds === null ? null : perRequest(dbCpuSeconds),
  };
}

export function importTable(timings: ImportTiming[]): string {
  const cpu = (seconds: number | null) => (seconds === null ? '—' : seconds.toFixed(1));
  return [
    '| database | command | contacts | seconds | contacts/s | CPU s, the command | CPU s, the database |',
    '|---|---|---:|---:|---:|---:|---:|',
    ...timings.map(
      (t) =>
        `| ${t.database} | ${t.command} | ${t.contacts.toLocaleString('en')} | ${t.seconds.toFixed(1)} | ${Math.round(t.contacts / t.seconds).toLocaleString('en')} | ${cpu(t.cpuSeconds)} | ${cpu(t.dbCpuSeconds)} |`,
    ),
  ].join('\n');
}

export function startupTable(figures: StartupFigure[]): string {
  return [
    '| database | p99 ms | p50 ms | req/s | CPU µs per request | of it db µs |',
    '|---|---:|---:|---:|---:|---:|',
    ...figures.map(
      (f) =>
        `| ${f.database} | ${f.p99.toFixed(1)} | ${f.p50.toFixed(2)} | ${f.rps.toFixed(0)} | ${f.cpuUs.toFixed(0)} | ${f.dbCpuUs === null ? '—' : f.dbCpuUs.toFixed(0)} |`,
    ),
  ].join('\n');
}
