/**
 * What a transaction pooler costs per statement (docs/operations.md "Behind PgBouncer"): the cancel deadline of a
 * statement outside a transaction, unnamed statements, and the alternative of one transaction per statement.
 * `tsx bench/pooled-statements.ts <direct postgres URL> <the same database through PgBouncer>`; N statements per
 * round (default 2000), ROUNDS rounds (default 5).
 */
import type pg from 'pg';
import { normalizeContactInput } from '../src/domain/contact-input.js';
import { parseDatabaseUrl } from '../src/domain/database-url.js';
import type { StoreOptions } from '../src/store/contracts/store-options.js';
import { openStore } from '../src/store/open-store.js';
import { openPool } from '../src/store/postgres/connection.js';
import { postgresPageSource } from '../src/store/postgres/page-source.js';
import { inTransaction } from '../src/store/postgres/transaction.js';

const [direct, pooled] = process.argv.slice(2);
if (!direct || !pooled) throw new Error('usage: tsx bench/pooled-statements.ts <direct URL> <PgBouncer URL>');
const N = Number(process.env.N ?? 2000);
const ROUNDS = Number(process.env.ROUNDS ?? 5);

type Statement = (pool: pg.Pool, index: number) => Promise<unknown>;

const store = await openStore(parseDatabaseUrl(direct));
await store.migrate();
const { id: owner } = await store.users.create({ email: `bench-${Date.now()}@example.com`, name: null, plan: 'pro' });
await store.contacts.importContacts(
  owner,
  Array.from({ length: 2000 }, (_, index) => ({
    label: `r${index}`,
    contact: normalizeContactInput({ id: null, name: `Person ${index}`, email: `p${index}@example.com` }),
  })),
);
await store.close();

const select1: Statement = (pool) => pool.query('SELECT 1');
const page: Statement = (pool, index) => postgresPageSource(pool).page(owner, null, (index * 37) % 1900, 50);
const inItsOwnTransaction: Statement = (pool) => inTransaction(pool, (client) => client.query('SELECT 1'));

const ROWS: [string, string, StoreOptions, Statement][] = [
  ['SELECT 1 through PgBouncer, deadline armed', pooled, { statementTimeoutMs: 5000 }, select1],
  ['SELECT 1 through PgBouncer, no timeout', pooled, {}, select1],
  ['SELECT 1 through PgBouncer in BEGIN+SET LOCAL … COMMIT', pooled, {}, inItsOwnTransaction],
  ['page of 50, direct, named', direct, { pooler: 'none', statementTimeoutMs: 5000 }, page],
  ['page of 50, direct, unnamed (DB_POOLER=transaction)', direct, { pooler: 'transaction', statementTimeoutMs: 5000 }, page],
];

/** Statements per turn: the rows take turns this often, so that a drifting load falls on every row alike. */
const TURN = 100;

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;

const pools = ROWS.map(([, url, options]) => openPool(url, { ...options, pool: { size: 1, queueLimit: 10 } }));
const results = ROWS.map(() => ({ wall: [] as number[], cpu: [] as number[] }));
for (const [index, [, , , statement]] of ROWS.entries()) for (let warm = 0; warm < 300; warm++) await statement(pools[index]!, warm);
for (let round = 0; round < ROUNDS; round++) {
  const spent = ROWS.map(() => ({ wall: 0, cpu: 0 }));
  for (let turn = 0; turn < N / TURN; turn++) {
    for (const [index, [, , , statement]] of ROWS.entries()) {
      const cpuBefore = process.cpuUsage();
      const started = process.hrtime.bigint();
      for (let each = 0; each < TURN; each++) await statement(pools[index]!, turn * TURN + each);
      const cpu = process.cpuUsage(cpuBefore);
      spent[index]!.wall += Number(process.hrtime.bigint() - started) / 1e3;
      spent[index]!.cpu += cpu.user + cpu.system;
    }
  }
  for (const [index, { wall, cpu }] of spent.entries()) {
    results[index]!.wall.push(wall / N);
    results[index]!.cpu.push(cpu / N);
  }
}
for (const [index, [label]] of ROWS.entries()) {
  const { wall, cpu } = results[index]!;
  console.log(`${label.padEnd(56)} ${median(wall).toFixed(0)} µs wall, ${median(cpu).toFixed(0)} µs client CPU per statement`);
}
const timers = 200_000;
const started = process.hrtime.bigint();
for (let index = 0; index < timers; index++) clearTimeout(setTimeout(() => undefined, 5000));
console.log(`the deadline alone (setTimeout + clearTimeout): ${(Number(process.hrtime.bigint() - started) / timers / 1e3).toFixed(2)} µs`);
await Promise.all(pools.map((pool) => pool.end()));
