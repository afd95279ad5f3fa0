/**
 * CPU time and memory of processes, read from /proc: what the bench divides by the requests answered.
 *
 * A process's CPU is utime + stime + cutime + cstime of /proc/<pid>/stat (its own and that of the children it waited
 * for), in clock ticks. Between two samples a process counts the difference, a process born after the first counts
 * all of its ticks, and one that died in between counts in its parent's cutime when the parent is sampled too.
 */
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import pg from 'pg';

/** Clock ticks per second (`getconf CLK_TCK`). */
export const CLOCK_TICKS = Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;

interface Stat {
  ppid: number;
  ticks: number;
  start: number;
}

function readStat(pid: number): Stat | null {
  try {
    const text = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // Fields after the command name (in parentheses, which may hold spaces): state is field 3.
    const fields = text.slice(text.lastIndexOf(')') + 2).split(' ');
    const field = (n: number) => Number(fields[n - 3]);
    return { ppid: field(4), ticks: field(14) + field(15) + field(16) + field(17), start: field(22) };
  } catch {
    return null;
  }
}

export function childrenOf(pid: number): number[] {
  try {
    return readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8').trim().split(/\s+/).filter(Boolean).map(Number);
  } catch {
    return [];
  }
}

/** A process and all its descendants (empty once it is gone). */
export function processTree(pid: number): number[] {
  if (readStat(pid) === null) return [];
  return [pid, ...childrenOf(pid).flatMap(processTree)];
}

export function rssKb(pid: number): number | null {
  try {
    const match = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return match ? Number(match[1]) : null;
  } catch {
    return null;
  }
}

/** The CPU ticks of each of a set of processes at one moment, keyed by pid and start time. */
export type CpuSample = Map<string, number>;

export function sampleCpu(pids: number[]): CpuSample {
  const sample: CpuSample = new Map();
  for (const pid of pids) {
    const stat = readStat(pid);
    if (stat) sample.set(`${pid}@${stat.start}`, stat.ticks);
  }
  return sample;
}

/** CPU seconds spent between two samples of the same set of processes. */
export function cpuSecondsBetween(before: CpuSample, after: CpuSample): number {
  let ticks = 0;
  for (const [process, now] of after) ticks += now - (before.get(process) ?? 0);
  return ticks / CLOCK_TICKS;
}

/** CPU seconds of this process's children it has waited for (a command run to its end counts here). */
export function waitedChildrenSeconds(): number {
  const text = readFileSync('/proc/self/stat', 'utf8');
  const fields = text.slice(text.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[16 - 3]) + Number(fields[17 - 3])) / CLOCK_TICKS;
}

function commandLine(pid: number): string {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8').replaceAll('\0', ' ').trim();
  } catch {
    return '';
  }
}

/**
 * The PostgreSQL processes that work for one database: every child of the postmaster except the client backends of
 * other databases (tests and other runs share the server). The background processes (checkpointer, writers,
 * autovacuum, parallel workers) count whatever database they serve. The postmaster is found as the parent of this
 * connection's backend; none is found when the server runs out of sight (another machine or container).
 */
export async function postgresProcesses(databaseUrl: string): Promise<(() => number[]) | null> {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  let postmaster: number | undefined;
  let database: string;
  try {
    const row = (await client.query('SELECT pg_backend_pid() AS pid, current_database() AS db')).rows[0] as { pid: number; db: string };
    // Read while the backend lives: it ends with the connection.
    postmaster = readStat(row.pid)?.ppid;
    database = row.db;
  } finally {
    await client.end();
  }
  if (postmaster === undefined || !commandLine(postmaster).includes('postgres')) return null;
  // A client backend's title: "postgres: [cluster: ]user database host(port) activity".
  const clientBackend = /^postgres: (?:\S+: )?\S+ (\S+) (?:\S+\(\d+\)|\[local\])/;
  return () =>
    childrenOf(postmaster).filter((pid) => {
      const match = clientBackend.exec(commandLine(pid));
      return match === null || match[1] === database;
    });
}

/**
 * Follows the CPU of a changing set of processes (PostgreSQL backends that end with their connection) by sampling it
 * every `everyMs` until stopped: a process that ends counts what it had spent at its last sample.
 */
export function trackCpu(pids: () => number[], everyMs = 100): { stop(): number } {
  const before = sampleCpu(pids());
  const latest: CpuSample = new Map(before);
  const take = () => {
    for (const [process, ticks] of sampleCpu(pids())) latest.set(process, Math.max(latest.get(process) ?? 0, ticks));
  };
  const timer = setInterval(take, everyMs);
  return {
    stop: () => {
      clearInterval(timer);
      take();
      return cpuSecondsBetween(before, latest);
    },
  };
}
