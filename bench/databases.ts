/**
 * The bench's databases: the deterministic dataset generated once, loaded through the CLI's bulk path into SQLite and
 * PostgreSQL (kept between runs), and scratch PostgreSQL databases made by name.
 */
import { once } from 'node:events';
import { createReadStream, createWriteStream, existsSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import pg from 'pg';
import { BIG_USER_EMAIL, SMALL_USER_EMAIL, shapeForScale, writeDataset } from './dataset.js';

export interface Database {
  name: string;
  url: string;
  loadSeconds: number | null;
  diskBytes: number;
  bigKey: string;
  smallKey: string;
  bigTotal: number;
}

export interface DatabaseContext {
  work: string;
  scale: number;
  reload: boolean;
  /** The PostgreSQL server's URL the bench connects to for CREATE DATABASE. */
  postgresAdminUrl: string;
  /** The prefix of every PostgreSQL database the bench makes (`contacts_bench_`). */
  prefix: string;
  cli(databaseUrl: string, ...cliArgs: string[]): string;
  log(message: string): void;
}

export async function prepareDataset(context: DatabaseContext): Promise<string> {
  const { scale, work, log } = context;
  const dir = join(work, `dataset-${scale}`);
  if (!existsSync(join(dir, 'contacts.ndjson')) || context.reload) {
    log(`generating dataset (scale ${scale}) in ${dir}`);
    const started = Date.now();
    const written = await writeDataset(dir, shapeForScale(scale));
    log(`generated ${written.contacts} contacts over ${written.users} users in ${((Date.now() - started) / 1000).toFixed(1)} s`);
  }
  return dir;
}

/**
 * Contacts per `bulk-import` run when loading: one transaction of SQLite puts every page it writes in the WAL before
 * the checkpoint copies it, so a 10M-contact load in one would need the database's size twice over on disk.
 */
const LOAD_PART_CONTACTS = 1_000_000;

/** Loads the dataset through `bulk-import`, in runs of about LOAD_PART_CONTACTS contacts that never split an owner. */
async function bulkLoad(context: DatabaseContext, name: string, url: string, dataset: string): Promise<void> {
  const { cli, work, scale, log } = context;
  const users = ['--users', join(dataset, 'users.ndjson')];
  const contacts = join(dataset, 'contacts.ndjson');
  if (shapeForScale(scale).contacts <= LOAD_PART_CONTACTS) {
    cli(url, 'bulk-import', ...users, '--contacts', contacts);
    return;
  }
  // One file per database: two loads may run at once.
  const partPath = join(work, `load-part-${name}-${scale}.ndjson`);
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

export async function prepareDatabase(
  context: DatabaseContext,
  name: string,
  url: string,
  dataset: string,
  fresh: boolean,
): Promise<Database> {
  const { cli, work, scale, log } = context;
  const loadFile = join(work, `load-${name}-${scale}.json`);
  let loadSeconds: number | null = null;
  if (fresh) {
    log(`loading the dataset into ${name} through \`contacts-read-api bulk-import\``);
    const started = Date.now();
    cli(url, 'migrate');
    await bulkLoad(context, name, url, dataset);
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
export async function diskBytes(db: Pick<Database, 'url'>): Promise<number> {
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

/** The URL of PostgreSQL database `<prefix><suffix>`, created if missing (or made again when `fresh`); whether it is new. */
export async function postgresDatabase(
  context: DatabaseContext,
  suffix: string,
  fresh: boolean,
): Promise<{ url: string; created: boolean }> {
  const dbName = `${context.prefix}${suffix}`;
  const admin = new pg.Client({ connectionString: context.postgresAdminUrl });
  await admin.connect();
  const exists = (await admin.query('SELECT 1 FROM pg_database WHERE datname = $1', [dbName])).rowCount === 1;
  if (exists && fresh) await admin.query(`DROP DATABASE ${dbName} WITH (FORCE)`);
  if (!exists || fresh) await admin.query(`CREATE DATABASE ${dbName}`);
  await admin.end();
  const url = new URL(context.postgresAdminUrl);
  url.pathname = `/${dbName}`;
  return { url: url.toString(), created: !exists || fresh };
}

export async function preparePostgres(context: DatabaseContext, dataset: string): Promise<Database> {
  const { url, created } = await postgresDatabase(context, String(context.scale).replace('.', '_'), context.reload);
  return prepareDatabase(context, 'PostgreSQL', url, dataset, created);
}
