/**
 * A server under test as a child process: started and waited for, its peak RSS tracked, and a measured stretch of load
 * timed in CPU (its whole process tree, and the database's processes when given) and in log lines written.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { closeSync, openSync, readSync, statSync, truncateSync, writeFileSync } from 'node:fs';
import { request } from 'node:http';
import { cpuSecondsBetween, processTree, rssKb, sampleCpu } from './proc-stat.js';

export interface Measured<T> {
  result: T;
  /** CPU seconds of the server's processes. */
  cpuSeconds: number;
  /** CPU seconds of the database's processes, when they are measured (PostgreSQL). */
  dbCpuSeconds: number | null;
  /** Lines the server wrote to its log file, when it has one. */
  logLines: number | null;
}

export interface RunningServer {
  /** The peak RSS of each worker (of the process, when it has none) since the last call or the start, in MB. */
  takePeaks(): number[];
  /** Runs `load`, and counts the CPU and the log lines it cost from just before to just after. */
  measure<T>(load: () => T | Promise<T>): Promise<Measured<T>>;
  /** Stops the server: the peaks since the last takePeaks(), and each worker's RSS right before it stopped, in MB. */
  stop(): Promise<{ peaks: number[]; lastRssMb: number[] }>;
}

export interface ServerOptions {
  env: NodeJS.ProcessEnv;
  port: number;
  /** A file the server's stdout (its request log) is appended to. */
  logFile?: string;
  /** The database's processes, whose CPU counts beside the server's. */
  databaseProcesses?: (() => number[]) | null;
}

export const sleep = (ms: number) => new Promise((done) => setTimeout(done, ms));

/** Starts a server process and waits until it answers; tracks the peak RSS of it and its children. */
export async function startServer(command: string, commandArgs: string[], options: ServerOptions): Promise<RunningServer> {
  const { port, logFile } = options;
  if (logFile) writeFileSync(logFile, '');
  const out = logFile ? openSync(logFile, 'a') : 'ignore';
  const child: ChildProcess = spawn(command, commandArgs, {
    env: { ...process.env, ...options.env, PORT: String(port) },
    stdio: ['ignore', out, 'inherit'],
  });
  if (typeof out === 'number') closeSync(out);
  const exited = new Promise((done) => child.once('exit', done));
  const tree = () => processTree(child.pid!);
  // Workers report separately; the primary of a cluster only forwards connections.
  const workersOf = (pids: number[]) => (pids.length > 1 ? pids.filter((pid) => pid !== child.pid) : pids);
  let peaks = new Map<number, number>();
  const sample = () => {
    for (const pid of tree()) {
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
    const workers = new Set(workersOf([...peaks.keys()]));
    const mb = [...peaks.entries()].filter(([pid]) => workers.has(pid)).map(([, kb]) => Math.round(kb / 1024));
    peaks = new Map();
    return mb;
  };
  const database = options.databaseProcesses ?? null;
  return {
    takePeaks,
    measure: async (load) => {
      const logStart = logFile ? statSync(logFile).size : 0;
      const [server, db] = [sampleCpu(tree()), database ? sampleCpu(database()) : null];
      const result = await load();
      const [serverAfter, dbAfter] = [sampleCpu(tree()), database ? sampleCpu(database()) : null];
      const logLines = logFile ? linesSince(logFile, logStart) : null;
      // The log is appended to: emptied, it keeps the disk from filling over a long run.
      if (logFile) truncateSync(logFile, 0);
      return {
        result,
        cpuSeconds: cpuSecondsBetween(server, serverAfter),
        dbCpuSeconds: db && dbAfter ? cpuSecondsBetween(db, dbAfter) : null,
        logLines,
      };
    },
    stop: async () => {
      clearInterval(timer);
      const lastRssMb = workersOf(tree()).map((pid) => Math.round((rssKb(pid) ?? 0) / 1024));
      const last = takePeaks();
      child.kill('SIGTERM');
      await exited;
      return { peaks: last, lastRssMb };
    },
  };
}

/** Newlines written to `file` past byte `from`. */
function linesSince(file: string, from: number): number {
  const fd = openSync(file, 'r');
  const buffer = Buffer.alloc(1 << 20);
  let lines = 0;
  let position = from;
  try {
    for (;;) {
      const read = readSync(fd, buffer, 0, buffer.length, position);
      if (read === 0) return lines;
      for (let i = 0; i < read; i += 1) if (buffer[i] === 10) lines += 1;
      position += read;
    }
  } finally {
    closeSync(fd);
  }
}

export function answers(port: number): Promise<boolean> {
  return new Promise((done) => {
    const req = request({ host: '127.0.0.1', port, path: '/healthz', method: 'GET' }, (res) => {
      res.resume();
      done(true);
    });
    req.on('error', () => done(false));
    req.end();
  });
}
