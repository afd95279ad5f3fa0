/**
 * search_contacts benchmark: builds one user's network (100,000 contacts by default) among noise users in a scratch
 * SQLite file and a scratch PostgreSQL database, through the store's importContacts, then runs a fixed, realistic
 * mix of queries through store.search and prints p50/p99 per query class and overall, per database. It also times
 * importing the big network into fresh databases with the search index, without it, and with migration 2's
 * trigram index instead, to show what the index costs writes.
 *
 * Last, search_contacts right after start-up (bench/search-cold.ts): a network of --cold-contacts among the same noise,
 * a fresh `serve`, and the worst-case queries three times each over MCP.
 *
 *   npm run bench:search -- [--contacts 100000] [--noise 200000] [--rounds 30] [--limit 10] [--cold-contacts 40000]
 *                           [--postgres postgres://…] [--no-postgres] [--no-import-cost] [--cold-only] [--port 4300]
 *                           [--cold-keep] [--out docs/benchmarks.md]
 *
 * --cold-keep keeps the cold-start databases (.bench/search-cold.db, contacts_search_cold) and uses them again when
 * they are there, instead of loading scratch ones.
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { cpus, tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import Database from 'better-sqlite3';
import pg from 'pg';
import { normalizeContactInput } from '../src/domain/contact-input.js';
import type { Migration } from '../src/store/migrator.js';
import { POSTGRES_MIGRATIONS } from '../src/store/postgres/migrations.js';
import { openPostgresStore } from '../src/store/postgres/postgres-store.js';
import { SQLITE_MIGRATIONS } from '../src/store/sqlite/migrations.js';
import { openSqliteStore } from '../src/store/sqlite/sqlite-store.js';
import type { ImportRecord, Store } from '../src/store/store.js';
import { prng } from '../test/support/prng.js';
import { generateContact } from './dataset.js';
import { writeResultsSection } from './results-file.js';
import { COLD_CALLS, COLD_QUERIES, coldSearchTimings, coldTable, type ColdTimings } from './search-cold.js';

const { values: args } = parseArgs({
  options: {
    contacts: { type: 'string', default: '100000' },
    noise: { type: 'string', default: '200000' },
    'noise-users': { type: 'string', default: '200' },
    rounds: { type: 'string', default: '30' },
    limit: { type: 'string', default: '10' },
    postgres: { type: 'string', default: 'postgres://postgres@127.0.0.1:5432/postgres' },
    'no-postgres': { type: 'boolean', default: false },
    'no-import-cost': { type: 'boolean', default: false },
    'cold-contacts': { type: 'string', default: '40000' },
    'cold-only': { type: 'boolean', default: false },
    'cold-keep': { type: 'boolean', default: false },
    port: { type: 'string', default: '4300' },
    out: { type: 'string' },
  },
});

function positiveInteger(name: string, value: string | undefined): number {
  const number = Number(value);
  if (!Number.isInteger(number) || number < 1) throw new Error(`--${name} must be a positive integer; got ${value}`);
  return number;
}

const NETWORK = positiveInteger('contacts', args.contacts);
const NOISE = positiveInteger('noise', args.noise);
const NOISE_USERS = positiveInteger('noise-users', args['noise-users']);
const ROUNDS = positiveInteger('rounds', args.rounds);
const LIMIT = positiveInteger('limit', args.limit);
const COLD_NETWORK = positiveInteger('cold-contacts', args['cold-contacts']);
const PORT = positiveInteger('port', args.port);
const BATCH = 5_000;
const BIG_SEED = 1;
const BIG_EMAIL = 'big@search.bench';
const NOISE_SEED = 2;

function log(message: string): void {
  process.stderr.write(`[bench:search] ${message}\n`);
}

/** A deterministic network: contacts created over five years, in list order. */
function network(seed: number, size: number): ImportRecord[] {
  const random = prng(seed);
  const start = Date.parse('2021-01-01T00:00:00.000Z');
  const step = (5 * 365 * 86_400_000) / size;
  return Array.from({ length: size }, (_, index) => {
    const created = new Date(start + Math.floor(index * step + random() * step)).toISOString();
    const { id: _id, ...values } = generateContact(random, '', created);
    return { label: `contact ${index + 1}`, contact: normalizeContactInput(values) };
  });
}

interface QueryClass {
  name: string;
  queries: string[];
}

/** The query mix, drawn from the big network itself so that names and companies are ones it holds. */
function queryMix(records: readonly ImportRecord[]): QueryClass[] {
  const random = prng(7);
  const sample = () => records[Math.floor(random() * records.length)]!.contact.values;
  const names = Array.from({ length: 8 }, () => (sample().name ?? 'x y').toLowerCase().split(' '));
  return [
    { name: '1 character', queries: ['a', 'j', 'm', 's', 'k', 'd', 'q', 'z'] },
    { name: '2 characters', queries: names.map(([first]) => first!.slice(0, 2)) },
    { name: '3 characters', queries: names.map(([, last]) => last!.slice(0, 3)) },
    { name: 'first name', queries: names.map(([first]) => first!) },
    { name: 'last name', queries: names.map(([, last]) => last!) },
    { name: 'full name', queries: names.map((words) => words.join(' ')) },
    {
      name: 'company word',
      queries: [...Array.from({ length: 4 }, () => sample().company!.split(' ')[0]!.toLowerCase()), 'labs', 'ventures', 'partners', 'gmbh'],
    },
    { name: 'email domain', queries: ['gmail', 'yahoo', 'outlook', 'icloud', 'proton', 'gmail.com', '@yahoo.com', 'proton.me'] },
    { name: 'tag', queries: ['founder', 'investor', 'friend', 'alumni', 'recruiter', 'advisor', 'press', 'family'] },
    { name: 'no match', queries: ['zzzz', 'qxqx', 'xylophonist', 'nobody here', 'zq', 'qq', 'jo zzz', 'gmail zzz'] },
    ...ADVERSARIAL,
  ];
}

/**
 * Queries that cost the most to answer exactly: short words that most contacts match, rare combinations of them
 * that no index narrows, and digits that no contact of the dataset holds. Each stays within the query rules.
 */
const ADVERSARIAL: QueryClass[] = [
  { name: 'adversarial: every letter', queries: [...'abcdefghijklmnopqrstuvwxyz'] },
  { name: 'adversarial: one-letter words', queries: ['a 0', 'x y z', 'a b c d e', 'a b c d e f g h i j', 'e e e e', 'q 1', 'z a', 's m'] },
  {
    // One letter each once FTS5 drops the leading combining mark (issue 24): the same class as the row above.
    name: 'adversarial: marked one-letter words',
    queries: [
      '\u0301a \u0301e \u0301s \u0301m \u0301c',
      '\u0301a',
      '\u0301j \u0301s',
      'a \u0301b',
      '\u0301\u0301e \u0301x',
      '\u0301q 1',
      '\u0301z a',
      '\u0301s \u0301m',
    ],
  },
  {
    name: 'adversarial: short words',
    queries: ['ma 0', 'jo a', 'ab cd ef', 'de la', 'an ab ac ad ae af ag ah', 'ke zz', 'gmail x', 'founder 0'],
  },
  { name: 'adversarial: digits', queries: ['0', '1', '42', '2024', '0 0', '1 2 3', '007', 'a1'] },
];

async function importNetwork(store: Store, ownerId: string, records: readonly ImportRecord[]): Promise<void> {
  for (let start = 0; start < records.length; start += BATCH) {
    await store.contacts.importContacts(ownerId, records.slice(start, start + BATCH));
  }
}

/**
 * The big user first, then noise users sharing NOISE contacts; returns the big user's id. The records are made
 * here and dropped after, so that the searches measured later do not run beside a heap of test data.
 */
async function load(store: Store, size = NETWORK): Promise<string> {
  const started = Date.now();
  const owner = await store.users.create({ email: BIG_EMAIL, name: 'Big Network', plan: 'pro' });
  await importNetwork(store, owner.id, network(BIG_SEED, size));
  const noise = network(NOISE_SEED, NOISE);
  const share = Math.ceil(noise.length / NOISE_USERS);
  for (let user = 0; user < NOISE_USERS; user += 1) {
    const noiseUser = await store.users.create({ email: `noise${user}@search.bench`, name: `Noise ${user}`, plan: 'pro' });
    await importNetwork(store, noiseUser.id, noise.slice(user * share, (user + 1) * share));
  }
  log(`${store.dialect.name}: loaded ${size + NOISE} contacts in ${((Date.now() - started) / 1000).toFixed(1)} s`);
  return owner.id;
}

type Timings = Map<string, number[]>;

/** Every query of the mix ROUNDS times, in a shuffled order, after one warm-up pass. */
async function measure(store: Store, ownerId: string, mix: readonly QueryClass[]): Promise<Timings> {
  const runs = mix.flatMap((queryClass) => queryClass.queries.map((query) => ({ queryClass: queryClass.name, query })));
  for (const run of runs) await store.contacts.search(ownerId, run.query, LIMIT);
  const random = prng(11);
  const order = Array.from({ length: ROUNDS }, () => runs).flat();
  for (let i = order.length - 1; i > 0; i -= 1) {
    const j = Math.floor(random() * (i + 1));
    [order[i], order[j]] = [order[j]!, order[i]!];
  }
  const timings: Timings = new Map(mix.map((queryClass) => [queryClass.name, []]));
  for (const run of order) {
    const started = performance.now();
    await store.contacts.search(ownerId, run.query, LIMIT);
    timings.get(run.queryClass)!.push(performance.now() - started);
  }
  return timings;
}

function percentile(values: readonly number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil(p * sorted.length) - 1)]!;
}

/** A scratch database of one kind: a fresh migrated store, and a way to run plain SQL on it. */
interface BenchDatabase {
  name: string;
  /** `work` gets the store, a way to run SQL beside it, and the database's URL for the CLI. */
  withStore<T>(work: (store: Store, exec: (sql: string) => Promise<void>, url: string) => Promise<T>, kept?: string): Promise<T>;
  /** What autovacuum would have done by the time a loaded database serves searches. */
  settle: string;
  /** Migration 4's search index taken away, and migration 2's trigram index put back instead. */
  withoutIndex: string;
  withTrigramIndex: string;
}

const MIGRATION_2 = (migrations: readonly Migration[]) => migrations.find((migration) => migration.version === 2)!.sql;
const NO_SQLITE_INDEX = 'DROP TRIGGER contact_words_insert; DROP TRIGGER contact_words_update; DROP TRIGGER contact_words_delete;';
const NO_POSTGRES_INDEX = 'DROP INDEX contacts_search_lexemes; ALTER TABLE contacts DROP COLUMN search_lexemes;';

const SQLITE: BenchDatabase = {
  name: 'SQLite',
  async withStore(work, kept) {
    const dir = kept === undefined ? mkdtempSync(join(tmpdir(), 'contacts-search-bench-')) : join(import.meta.dirname, '..', '.bench');
    mkdirSync(dir, { recursive: true });
    const path = join(dir, kept === undefined ? 'contacts.db' : `${kept.replaceAll('_', '-')}.db`);
    const store = openSqliteStore(path);
    try {
      await store.migrate();
      return await work(
        store,
        async (sql) => {
          const db = new Database(path);
          db.exec(sql);
          db.close();
        },
        `file:${path}`,
      );
    } finally {
      await store.close();
      if (kept === undefined) rmSync(dir, { recursive: true, force: true });
    }
  },
  settle: 'PRAGMA optimize',
  withoutIndex: NO_SQLITE_INDEX,
  withTrigramIndex: `${NO_SQLITE_INDEX} ${MIGRATION_2(SQLITE_MIGRATIONS)}`,
};

const POSTGRES: BenchDatabase = {
  name: 'PostgreSQL',
  async withStore(work, kept) {
    const name = kept === undefined ? `contacts_search_bench_${process.pid}` : `contacts_${kept}`;
    const admin = new pg.Client({ connectionString: args.postgres });
    await admin.connect();
    try {
      const exists = (await admin.query('SELECT 1 FROM pg_database WHERE datname = $1', [name])).rowCount === 1;
      if (kept === undefined) await admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      if (kept === undefined || !exists) await admin.query(`CREATE DATABASE ${name}`);
      const url = new URL(args.postgres!);
      url.pathname = `/${name}`;
      const store = openPostgresStore(url.toString());
      try {
        await store.migrate();
        return await work(
          store,
          async (sql) => {
            const client = new pg.Client({ connectionString: url.toString() });
            await client.connect();
            await client.query(sql);
            await client.end();
          },
          url.toString(),
        );
      } finally {
        await store.close();
      }
    } finally {
      if (kept === undefined) await admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      await admin.end();
    }
  },
  // Flushes the GIN index's pending list and refreshes statistics and the visibility map.
  settle: 'VACUUM ANALYZE contacts',
  withoutIndex: NO_POSTGRES_INDEX,
  withTrigramIndex: `${NO_POSTGRES_INDEX} ${MIGRATION_2(POSTGRES_MIGRATIONS)}`,
};

async function searchTimings(database: BenchDatabase, mix: readonly QueryClass[]): Promise<Timings> {
  return database.withStore(async (store, exec) => {
    const ownerId = await load(store);
    await exec(database.settle);
    return measure(store, ownerId, mix);
  });
}

/** The worst-case queries over MCP on a fresh server: the store only loads the network, `serve` answers. */
async function coldTimings(database: BenchDatabase): Promise<ColdTimings[]> {
  return database.withStore(
    async (store, exec, url) => {
      if ((await store.users.find(BIG_EMAIL)) === null) {
        await load(store, COLD_NETWORK);
        await exec(database.settle);
      }
      const env = { ...process.env, DATABASE_URL: url };
      const cli = (...cliArgs: string[]) => execFileSync(process.execPath, [CLI, ...cliArgs, '--json'], { env, encoding: 'utf8' });
      const { key } = JSON.parse(cli('keys', 'create', '--user', BIG_EMAIL, '--label', 'cold search')) as { key: string };
      return coldSearchTimings(url, key, { port: PORT, workers: cpus().length });
    },
    args['cold-keep'] ? 'search_cold' : undefined,
  );
}

interface ImportCost {
  database: string;
  index: string;
  seconds: number;
}

/** The search index's write cost: the big network imported into fresh databases that differ only in the index. */
async function importCosts(database: BenchDatabase): Promise<ImportCost[]> {
  const big = network(BIG_SEED, NETWORK);
  const variants = [
    { index: 'word index (migration 4)', sql: '' },
    { index: 'no search index', sql: database.withoutIndex },
    { index: 'trigram index (migration 2)', sql: database.withTrigramIndex },
  ];
  const costs: ImportCost[] = [];
  for (const variant of variants) {
    const seconds = await database.withStore(async (store, exec) => {
      if (variant.sql !== '') await exec(variant.sql);
      const owner = await store.users.create({ email: 'import@search.bench', name: 'Import', plan: 'pro' });
      const started = performance.now();
      await importNetwork(store, owner.id, big);
      return (performance.now() - started) / 1000;
    });
    log(`${database.name}: import of ${big.length} contacts, ${variant.index}: ${seconds.toFixed(1)} s`);
    costs.push({ database: database.name, index: variant.index, seconds });
  }
  return costs;
}

function report(mix: readonly QueryClass[], results: { database: string; timings: Timings }[], costs: ImportCost[]): string {
  const ms = (value: number) => value.toFixed(1);
  const header = ['Query class', 'Examples', ...results.flatMap(({ database }) => [`${database} p50 (ms)`, `${database} p99 (ms)`])];
  const rows = mix.map((queryClass) => [
    queryClass.name,
    queryClass.queries
      .slice(0, 3)
      .map((query) => `\`${query}\``)
      .join(', '),
    ...results.flatMap(({ timings }) => [
      ms(percentile(timings.get(queryClass.name)!, 0.5)),
      ms(percentile(timings.get(queryClass.name)!, 0.99)),
    ]),
  ]);
  rows.push([
    '**all**',
    `${mix.reduce((sum, queryClass) => sum + queryClass.queries.length, 0)} queries × ${ROUNDS}`,
    ...results.flatMap(({ timings }) => {
      const all = [...timings.values()].flat();
      return [`**${ms(percentile(all, 0.5))}**`, `**${ms(percentile(all, 0.99))}**`];
    }),
  ]);
  const table = [header, header.map(() => '---'), ...rows].map((cells) => `| ${cells.join(' | ')} |`).join('\n');
  const lines = [
    `One user's network of ${NETWORK.toLocaleString('en')} contacts among ${NOISE_USERS} other users holding ${NOISE.toLocaleString('en')}, ` +
      `each query through \`store.contacts.search\` (limit ${LIMIT}), in process, one at a time. ` +
      `Measured on ${new Date().toISOString().slice(0, 10)}: ${cpus().length} × ${cpus()[0]?.model ?? 'CPU'}, Node ${process.versions.node}, ` +
      'on a machine shared with other work; rerun with `npm run bench:search`.',
    '',
    table,
  ];
  if (costs.length > 0) {
    const none = (database: string) => costs.find((cost) => cost.database === database && cost.index === 'no search index')!.seconds;
    lines.push(
      '',
      `Import of the ${NETWORK.toLocaleString('en')}-contact network (\`importContacts\`, batches of ${BATCH.toLocaleString('en')}) into fresh databases that differ only in their search index:`,
      '',
      '| Database | Search index | Import (s) | Over no index (s) |',
      '| --- | --- | --- | --- |',
      ...costs.map(
        (cost) => `| ${cost.database} | ${cost.index} | ${cost.seconds.toFixed(1)} | ${(cost.seconds - none(cost.database)).toFixed(1)} |`,
      ),
    );
  }
  return lines.join('\n');
}

const CLI = join(import.meta.dirname, '..', 'dist/cli/main.js');
const databases = args['no-postgres'] ? [SQLITE] : [SQLITE, POSTGRES];
const sections: string[] = [];
if (!args['cold-only']) {
  const mix = queryMix(network(BIG_SEED, NETWORK));
  const results: { database: string; timings: Timings }[] = [];
  for (const database of databases) results.push({ database: database.name, timings: await searchTimings(database, mix) });
  const costs: ImportCost[] = [];
  if (!args['no-import-cost']) for (const database of databases) costs.push(...(await importCosts(database)));
  sections.push(report(mix, results, costs));
}
const cold: { database: string; timings: ColdTimings[] }[] = [];
for (const database of databases) cold.push({ database: database.name, timings: await coldTimings(database) });
sections.push(
  `Right after start-up: a network of ${COLD_NETWORK.toLocaleString('en')} contacts among the same ${NOISE.toLocaleString('en')}, ` +
    `a fresh \`serve\` (${cpus().length} workers), then each query ${COLD_CALLS} times in a row over MCP (\`tools/call\` of ` +
    `\`search_contacts\`, default limit, each call on a new connection), timed by the client: ${COLD_QUERIES.length} queries.`,
  coldTable(cold),
);
const output = sections.join('\n\n');
process.stdout.write(`${output}\n`);
if (args.out) writeResultsSection(args.out, 'search', `## search_contacts\n\n${output}`);
