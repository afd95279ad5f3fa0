import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { chownSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from './listen.js';
import { serverUser } from './pg-cluster.js';

/** Debian's package puts it here; PGBOUNCER_PATH names another build. */
export const PGBOUNCER_BIN = process.env.PGBOUNCER_PATH ?? '/usr/sbin/pgbouncer';

export function pgbouncerInstalled(): boolean {
  return existsSync(PGBOUNCER_BIN);
}

/**
 * The settings a fleet runs PgBouncer with: transaction pooling, and otherwise PgBouncer's defaults (the
 * startup parameters it ignores are its stock list). docs/operations.md quotes them.
 */
const TRANSACTION_POOLING = ['pool_mode = transaction', 'ignore_startup_parameters = extra_float_digits'];

/** A [databases] entry that routes to the server of `url` (a PostgreSQL URL), keeping the database name asked for. */
export function serverEntry(url: string): string {
  const { hostname, port } = new URL(url);
  return `host=${hostname} port=${port || '5432'}`;
}

/** A [databases] entry that routes to the database of `url` (a PostgreSQL URL). */
export function databaseEntry(url: string): string {
  return `${serverEntry(url)} dbname=${decodeURIComponent(new URL(url).pathname.slice(1))}`;
}

export interface PgBouncerProcess {
  /** `url` (a PostgreSQL URL) with its host and port replaced by PgBouncer's. */
  through(url: string): string;
  stop(): Promise<void>;
}

/**
 * A private PgBouncer on a free loopback port, run from a generated ini in a temp dir: trust auth for `postgres`,
 * TRANSACTION_POOLING, and `databases` as its [databases] section (`{ '*': serverEntry(url) }` routes every database
 * name to one server). As root it runs as the `postgres` OS user: PgBouncer refuses to run as root.
 */
export async function startPgBouncer(databases: Record<string, string>): Promise<PgBouncerProcess> {
  // Only CI runs the tests without it (externalToolPresent): it says what is missing rather than spawn's ENOENT.
  if (!pgbouncerInstalled())
    throw new Error(`PgBouncer is not installed at ${PGBOUNCER_BIN} (apt-get install pgbouncer, or set PGBOUNCER_PATH)`);
  const owner = serverUser();
  const base = mkdtempSync(join(tmpdir(), 'contacts-pgbouncer-'));
  if (owner) chownSync(base, owner.uid, owner.gid);
  const port = await freePort();
  const logFile = join(base, 'pgbouncer.log');
  const ini = [
    '[databases]',
    ...Object.entries(databases).map(([name, connection]) => `${name} = ${connection}`),
    '',
    '[pgbouncer]',
    'listen_addr = 127.0.0.1',
    `listen_port = ${port}`,
    `unix_socket_dir = ${base}`,
    'auth_type = trust',
    `auth_file = ${join(base, 'userlist.txt')}`,
    ...TRANSACTION_POOLING,
    `logfile = ${logFile}`,
    '',
  ].join('\n');
  writeFileSync(join(base, 'userlist.txt'), '"postgres" ""\n');
  writeFileSync(join(base, 'pgbouncer.ini'), ini);
  const child = spawn(PGBOUNCER_BIN, [join(base, 'pgbouncer.ini')], { cwd: base, stdio: 'ignore', ...(owner ?? {}) });
  const killOnExit = () => child.kill('SIGKILL');
  process.on('exit', killOnExit);
  const log = () => (existsSync(logFile) ? readFileSync(logFile, 'utf8').slice(-2000) : '');
  const cleanUp = async () => {
    if (child.exitCode === null && child.signalCode === null) {
      // SIGINT: PgBouncer's "safe shutdown" waits for clients; SIGTERM closes them at once.
      child.kill('SIGTERM');
      await once(child, 'exit');
    }
    process.off('exit', killOnExit);
    rmSync(base, { recursive: true, force: true });
  };
  try {
    await untilListening(child, port, log);
  } catch (error) {
    await cleanUp();
    throw error;
  }
  return {
    through(url) {
      const routed = new URL(url);
      routed.hostname = '127.0.0.1';
      routed.port = String(port);
      return routed.toString();
    },
    stop: cleanUp,
  };
}

async function untilListening(child: ChildProcess, port: number, log: () => string): Promise<void> {
  for (const deadline = Date.now() + 10_000; ; await new Promise((resolve) => setTimeout(resolve, 50))) {
    if (child.exitCode !== null || child.signalCode !== null)
      throw new Error(`pgbouncer exited (${child.exitCode ?? child.signalCode}):\n${log()}`);
    if (await accepts(port)) return;
    if (Date.now() > deadline) throw new Error(`pgbouncer did not listen on ${port} within 10 s:\n${log()}`);
  }
}

function accepts(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect({ host: '127.0.0.1', port });
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}
