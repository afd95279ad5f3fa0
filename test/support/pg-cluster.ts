import { execFile, execFileSync } from 'node:child_process';
import {
  accessSync,
  appendFileSync,
  chownSync,
  constants,
  existsSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { freePort } from './listen.js';

/**
 * Throwaway PostgreSQL clusters for tests that stop a database or stream to a replica: each runs from a
 * temp dir on a free loopback port, as the `postgres` OS user when the tests run as root.
 */
export interface TestCluster {
  readonly port: number;
  /** A URL of a database on this cluster (default `postgres`). */
  url(database?: string): string;
  /** Runs one statement on a database of this cluster (default `postgres`). */
  query<R extends pg.QueryResultRow = pg.QueryResultRow>(sql: string, values?: unknown[], database?: string): Promise<R[]>;
  start(): Promise<void>;
  /** `immediate` kills every backend mid-statement, like a crash; `fast` disconnects clients cleanly. */
  stop(mode?: 'fast' | 'immediate'): Promise<void>;
  /** Freezes the server and its backends (SIGSTOP): connections stay open and nothing answers, like a hung host. */
  freeze(): void;
  /** Lets a frozen server run again (SIGCONT). */
  thaw(): void;
  dispose(): Promise<void>;
}

const CLUSTER_SETTINGS = [
  "listen_addresses = '127.0.0.1'",
  'shared_buffers = 16MB',
  'fsync = off',
  'synchronous_commit = off',
  'full_page_writes = off',
  'logging_collector = off',
  'ssl = off',
  'hot_standby = on',
];

const HBA = ['local all all trust', 'host all all 127.0.0.1/32 trust', 'host replication all 127.0.0.1/32 trust', ''].join('\n');

/** Why clusters can't be made here (no server binaries), or null when they can. */
export function clusterToolsMissing(): string | null {
  return binDir() === null
    ? 'PostgreSQL server binaries (initdb, pg_ctl, pg_basebackup) not found under /usr/lib/postgresql/*/bin or PG_BINDIR'
    : null;
}

/**
 * True when tests needing throwaway clusters must skip (printing why): the tools are missing and this is
 * not CI. In CI they run regardless, so a missing tool fails them instead of hiding them.
 */
export function skipClusterTests(title: string, postgresAdminUrl: string | null): boolean {
  const reason = postgresAdminUrl === null ? 'PostgreSQL is not reachable' : clusterToolsMissing();
  if (reason === null || process.env.CI === 'true') return false;
  console.warn(`\n*** ${title}: SKIPPED — ${reason}. ***\n`);
  return true;
}

/** A new, empty cluster of its own (initdb), started. */
export async function startCluster(): Promise<TestCluster> {
  const cluster = await prepare();
  await cluster.run('initdb', ['-D', cluster.dataDir, '-U', 'postgres', '--auth=trust', '--no-sync', '-E', 'UTF8', '--locale=C']);
  return cluster.configureAndStart(['max_connections = 40']);
}

/**
 * A hot-standby streaming replica of the server at `primaryUrl` (pg_basebackup -R), started and caught up.
 * The primary must accept replication connections from 127.0.0.1; when its pg_hba.conf is a local file
 * without such a rule, one line allowing them from 127.0.0.1/32 is appended and the configuration reloaded.
 */
export async function startStreamingReplica(primaryUrl: string): Promise<StreamingReplica> {
  const major = await allowLoopbackReplication(primaryUrl);
  const primary = new URL(primaryUrl);
  // A standby runs the primary's major version.
  const cluster = await prepare(major);
  const args = [
    '-h',
    primary.hostname,
    '-p',
    primary.port || '5432',
    '-U',
    decodeURIComponent(primary.username || 'postgres'),
    '-D',
    cluster.dataDir,
    '-R',
    '-X',
    'stream',
    '-c',
    'fast',
    '--no-sync',
  ];
  // A pg_hba.conf just changed takes effect when the postmaster has handled the reload signal.
  for (let attempt = 1; ; attempt += 1) {
    try {
      await cluster.run('pg_basebackup', args);
      break;
    } catch (error) {
      if (attempt >= 10 || !/pg_hba\.conf/.test((error as Error).message)) throw error;
      rmSync(cluster.dataDir, { recursive: true, force: true });
      await sleep(300);
    }
  }
  // A hot standby needs max_connections and its kin at least as high as the primary's: they are left as copied.
  const replica = await cluster.configureAndStart();
  const waitFor = async (what: string, sql: string, values: unknown[] = []) => {
    for (const deadline = Date.now() + 30_000; ; await sleep(20)) {
      const [row] = await replica.query<{ done: boolean }>(sql, values);
      if (row?.done) return;
      if (Date.now() > deadline) throw new Error(`replica: ${what} did not happen within 30 s`);
    }
  };
  const streaming: StreamingReplica = Object.assign(replica, {
    async catchUp() {
      const current = await withClient(primaryUrl, (client) => client.query<{ lsn: string }>('SELECT pg_current_wal_lsn()::text AS lsn'));
      const lsn = current.rows[0]!.lsn;
      await waitFor(`replay up to ${lsn}`, 'SELECT coalesce(pg_last_wal_replay_lsn() >= $1::pg_lsn, false) AS done', [lsn]);
    },
    async pauseReplay() {
      await replica.query('SELECT pg_wal_replay_pause()');
      // Pausing is a request; only 'paused' guarantees that later primary writes stay unseen.
      await waitFor('pause', "SELECT pg_get_wal_replay_pause_state() = 'paused' AS done");
    },
    async resumeReplay() {
      await replica.query('SELECT pg_wal_replay_resume()');
    },
  });
  await streaming.catchUp();
  return streaming;
}

/** A hot standby that can be made to lag on purpose. */
export interface StreamingReplica extends TestCluster {
  /** Waits until the replica has replayed everything the primary had written when called. */
  catchUp(): Promise<void>;
  /** Stops applying WAL (returns once paused): writes on the primary stay invisible here until resumeReplay(). */
  pauseReplay(): Promise<void>;
  resumeReplay(): Promise<void>;
}

interface PreparedCluster {
  dataDir: string;
  run(tool: string, args: string[]): Promise<string>;
  configureAndStart(extraSettings?: string[]): Promise<TestCluster>;
}

async function prepare(major?: number): Promise<PreparedCluster> {
  const bin = binDir(major);
  if (bin === null)
    throw new Error(
      major === undefined ? clusterToolsMissing()! : `PostgreSQL ${major} server binaries not found under /usr/lib/postgresql/${major}/bin`,
    );
  const owner = serverUser();
  const base = mkdtempSync(join(tmpdir(), 'contacts-pg-'));
  if (owner) chownSync(base, owner.uid, owner.gid);
  const dataDir = join(base, 'data');
  const logFile = join(base, 'postgres.log');
  const port = await freePort();

  const run = (tool: string, args: string[]) =>
    new Promise<string>((resolve, reject) => {
      execFile(
        join(bin, tool),
        args,
        { cwd: base, env: { ...process.env, HOME: base }, timeout: 120_000, ...(owner ?? {}) },
        (error, stdout, stderr) => {
          if (!error) return resolve(stdout);
          const log = existsSync(logFile) ? `\n--- ${logFile} ---\n${readFileSync(logFile, 'utf8').slice(-2000)}` : '';
          reject(new Error(`${tool} failed: ${stderr || error.message}${log}`));
        },
      );
    });
  const pgCtl = (args: string[]) => run('pg_ctl', ['-D', dataDir, ...args]);
  const url = (database = 'postgres') => `postgres://postgres@127.0.0.1:${port}/${database}`;

  let running = false;
  /** The postmaster (first line of postmaster.pid) and the processes it forked. */
  const serverProcesses = (): number[] => {
    const postmaster = Number(readFileSync(join(dataDir, 'postmaster.pid'), 'utf8').split('\n', 1)[0]);
    const children = readdirSync('/proc')
      .filter((name) => /^\d+$/.test(name))
      .filter((pid) => {
        try {
          // /proc/<pid>/stat: "pid (comm) state ppid …"; comm may hold spaces, so read after the last ')'.
          const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
          return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]) === postmaster;
        } catch {
          return false;
        }
      })
      .map(Number);
    return [postmaster, ...children];
  };
  const signalServer = (signal: NodeJS.Signals) => {
    for (const pid of serverProcesses()) {
      try {
        process.kill(pid, signal);
      } catch (error) {
        // A backend that exited since the listing needs no signal.
        if ((error as NodeJS.ErrnoException).code !== 'ESRCH') throw error;
      }
    }
  };
  const stopOnExit = () => {
    if (running) execFileSync(join(bin, 'pg_ctl'), ['-D', dataDir, '-m', 'immediate', 'stop'], { stdio: 'ignore', ...(owner ?? {}) });
  };

  const cluster: TestCluster = {
    port,
    url,
    query: async (sql, values = [], database = 'postgres') => (await withClient(url(database), (client) => client.query(sql, values))).rows,
    async start() {
      await pgCtl(['-l', logFile, '-w', '-t', '60', 'start']);
      running = true;
    },
    async stop(mode = 'fast') {
      await pgCtl(['-m', mode, '-w', '-t', '60', 'stop']);
      running = false;
    },
    freeze() {
      signalServer('SIGSTOP');
    },
    thaw() {
      signalServer('SIGCONT');
    },
    async dispose() {
      if (running) {
        cluster.thaw();
        await cluster.stop('immediate');
      }
      // Only now: had stopping failed, the exit hook would still try.
      process.off('exit', stopOnExit);
      rmSync(base, { recursive: true, force: true });
    },
  };
  return {
    dataDir,
    run,
    async configureAndStart(extraSettings = []) {
      const settings = [...CLUSTER_SETTINGS, ...extraSettings, `port = ${port}`, `unix_socket_directories = '${base}'`, ''];
      // Later settings win, so appending overrides whatever initdb or the primary's copy brought.
      appendFileSync(join(dataDir, 'postgresql.conf'), `\n${settings.join('\n')}`);
      writeFileSync(join(dataDir, 'pg_hba.conf'), HBA);
      appendFileSync(join(dataDir, 'pg_ident.conf'), '');
      if (owner) {
        for (const file of ['postgresql.conf', 'pg_hba.conf', 'pg_ident.conf']) chownSync(join(dataDir, file), owner.uid, owner.gid);
      }
      process.on('exit', stopOnExit);
      await cluster.start();
      return cluster;
    },
  };
}

/** Lets the primary stream to loopback if it doesn't yet; returns its major version. */
async function allowLoopbackReplication(primaryUrl: string): Promise<number> {
  return withClient(primaryUrl, async (client) => {
    const major = Math.floor(
      Number((await client.query<{ v: string }>("SELECT current_setting('server_version_num') AS v")).rows[0]!.v) / 10_000,
    );
    const { rows } = await client.query(
      `SELECT 1 FROM pg_hba_file_rules WHERE type IN ('host', 'hostnossl') AND auth_method = 'trust' AND error IS NULL
         AND ('replication' = ANY(database)) AND address IN ('127.0.0.1', 'all', 'samehost')`,
    );
    if (rows.length > 0) return major;
    const hbaFile = (await client.query<{ hba_file: string }>('SHOW hba_file')).rows[0]!.hba_file;
    try {
      accessSync(hbaFile, constants.W_OK);
    } catch {
      throw new Error(
        `the primary refuses replication from 127.0.0.1 and ${hbaFile} is not writable here: add "host replication all 127.0.0.1/32 trust"`,
      );
    }
    appendFileSync(
      hbaFile,
      '\n# Added by the contacts-api test setup: test replicas stream from loopback.\nhost replication all 127.0.0.1/32 trust\n',
    );
    await client.query('SELECT pg_reload_conf()');
    return major;
  });
}

/** PG_BINDIR, else the binaries of the installed server of that major version (default: the newest). */
function binDir(major?: number): string | null {
  if (process.env.PG_BINDIR) return existsSync(join(process.env.PG_BINDIR, 'pg_ctl')) ? process.env.PG_BINDIR : null;
  const root = '/usr/lib/postgresql';
  if (!existsSync(root)) return null;
  const versions = readdirSync(root)
    .filter((name) => /^\d+$/.test(name) && (major === undefined || Number(name) === major))
    .sort((a, b) => Number(b) - Number(a));
  const found = versions
    .map((version) => join(root, version, 'bin'))
    .find((dir) => ['initdb', 'pg_ctl', 'pg_basebackup'].every((tool) => existsSync(join(dir, tool))));
  return found ?? null;
}

/**
 * PostgreSQL (and PgBouncer) refuse to run as root: as root, clusters belong to and run as the `postgres` user.
 */
export function serverUser(): { uid: number; gid: number } | null {
  if (process.getuid?.() !== 0) return null;
  const id = (flag: string) => Number(execFileSync('id', [flag, 'postgres'], { encoding: 'utf8' }).trim());
  return { uid: id('-u'), gid: id('-g') };
}

async function withClient<T>(url: string, action: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 5_000 });
  await client.connect();
  try {
    return await action(client);
  } finally {
    await client.end();
  }
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
