/**
 * search_contacts right after start-up (issue 35, goal 6): a fresh `serve` (the default workers, one per core) on a
 * loaded database, then each of the worst-case queries three times over MCP (POST /mcp, one JSON-RPC tools/call each,
 * each on a new connection, so that calls go to every worker in turn), timed from the client: max and median per query.
 */
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { readdirSync, readFileSync } from 'node:fs';
import { request } from 'node:http';
import { resolve } from 'node:path';

const BIN = resolve(import.meta.dirname, '..', 'dist/cli/main.js');

/**
 * The queries the issue names: a one-letter word and a digit, every letter (refused: more than 10 words), the
 * commonest letter, four digits; and the first ten letters, the most one-letter words a query may have.
 */
export const COLD_QUERIES = ['a 0', [...'abcdefghijklmnopqrstuvwxyz'].join(' '), 'a b c d e f g h i j', 'e', '0 1 2 3'];
export const COLD_CALLS = 3;

export interface ColdTimings {
  query: string;
  /** Each call's time in ms, in order. */
  calls: number[];
  /** The CPU time `serve`'s processes (every thread) spent on each call, in ms: steadier than `calls` on a shared machine. */
  cpu: number[];
  /** What the last call answered: how many contacts, or the tool's refusal. */
  answer: string;
}

/** The process and its descendants. */
function processTree(pid: number): number[] {
  try {
    const children = readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8').trim().split(/\s+/).filter(Boolean).map(Number);
    return [pid, ...children.flatMap(processTree)];
  } catch {
    return [];
  }
}

/** CPU time of the processes (every thread of each) so far, in ms, from /proc/<pid>/task/<tid>/schedstat (ns). */
function cpuMs(pids: readonly number[]): number {
  let ns = 0;
  for (const pid of pids) {
    try {
      for (const tid of readdirSync(`/proc/${pid}/task`))
        ns += Number(readFileSync(`/proc/${pid}/task/${tid}/schedstat`, 'utf8').split(' ')[0]);
    } catch {
      // Gone meanwhile: a thread that ended, not a process of the server.
    }
  }
  return ns / 1e6;
}

/** Starts `serve` and resolves once every worker listens; gives its URL, its process id and a way to stop it. */
async function startServe(
  env: NodeJS.ProcessEnv,
  port: number,
  workers: number,
  bin: string,
): Promise<{ url: string; pid: number; stop: () => Promise<void> }> {
  const server = spawn(process.execPath, [bin, 'serve', '--host', '127.0.0.1', '--port', String(port), '--workers', String(workers)], {
    env,
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  const exited = once(server, 'exit');
  const url = await new Promise<string>((resolveUrl, reject) => {
    let stderr = '';
    server.stderr!.on('data', (chunk: Buffer) => {
      stderr += chunk.toString();
      const listening = [...stderr.matchAll(/listening on (http:\/\/\S+)/g)];
      if (listening.length >= workers) resolveUrl(listening[0]![1]!);
    });
    server.once('exit', (code) => reject(new Error(`serve exited with ${code}: ${stderr}`)));
  });
  return {
    url,
    pid: server.pid!,
    stop: async () => {
      server.kill('SIGTERM');
      await exited;
    },
  };
}

interface ToolAnswer {
  result?: { isError?: boolean; content: { text: string }[]; structuredContent?: { data?: unknown[] } };
}

/** One tools/call on a connection of its own; resolves with what it answered (how many contacts, or the refusal). */
function searchOverMcp(url: string, key: string, query: string): Promise<string> {
  const body = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'search_contacts', arguments: { query } } });
  return new Promise((done, fail) => {
    const req = request(
      `${url}/mcp`,
      {
        method: 'POST',
        agent: false,
        headers: {
          authorization: `Bearer ${key}`,
          'content-type': 'application/json',
          accept: 'application/json, text/event-stream',
          'mcp-protocol-version': '2025-06-18',
        },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString();
          const result = res.statusCode === 200 ? (JSON.parse(text) as ToolAnswer).result : undefined;
          if (result === undefined) fail(new Error(`search_contacts ${JSON.stringify(query)}: ${res.statusCode} ${text}`));
          else if (result.isError) done(`refused: ${result.content[0]?.text}`);
          else done(`${result.structuredContent?.data?.length ?? 0} contacts`);
        });
      },
    );
    req.on('error', fail);
    req.end(body);
  });
}

/** A fresh server on `databaseUrl`, then each query COLD_CALLS times in a row. */
export async function coldSearchTimings(
  databaseUrl: string,
  key: string,
  /** `bin`: another build's CLI, to compare (default: this one's dist/). */
  options: { port: number; workers: number; bin?: string },
): Promise<ColdTimings[]> {
  const server = await startServe(
    { ...process.env, DATABASE_URL: databaseUrl, LOG_LEVEL: 'warn', RATE_LIMIT_PER_MINUTE: '0' },
    options.port,
    options.workers,
    options.bin ?? BIN,
  );
  try {
    const timings: ColdTimings[] = [];
    const pids = processTree(server.pid);
    for (const query of COLD_QUERIES) {
      const calls: number[] = [];
      const cpu: number[] = [];
      let answer = '';
      for (let call = 0; call < COLD_CALLS; call += 1) {
        const cpuBefore = cpuMs(pids);
        const started = performance.now();
        answer = await searchOverMcp(server.url, key, query);
        calls.push(performance.now() - started);
        cpu.push(cpuMs(pids) - cpuBefore);
      }
      timings.push({ query, calls, cpu, answer });
    }
    return timings;
  } finally {
    await server.stop();
  }
}

const median = (values: readonly number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;

/** The table: per query and database, every call, the median and the max. */
export function coldTable(results: { database: string; timings: ColdTimings[] }[]): string {
  const ms = (value: number) => value.toFixed(1);
  const rows = results.flatMap(({ database, timings }) =>
    timings.map(({ query, calls, cpu, answer }) => {
      const shown = query.length > 20 ? `${query.slice(0, 9)} … ${query.slice(-3)}` : query;
      return `| ${database} | \`${shown}\` | ${answer} | ${calls.map(ms).join(', ')} | ${ms(median(calls))} | ${ms(Math.max(...calls))} | ${cpu.map(ms).join(', ')} |`;
    }),
  );
  const all = results.flatMap(({ timings }) => timings.flatMap(({ calls }) => calls));
  const cpuAll = results.flatMap(({ timings }) => timings.flatMap(({ cpu }) => cpu));
  return [
    '| Database | Query | Answer | Calls (ms, in order) | Median (ms) | Max (ms) | `serve` CPU per call (ms) |',
    '| --- | --- | --- | --- | --- | --- | --- |',
    ...rows,
    `| **all** | | ${all.length} calls | | **${ms(median(all))}** | **${ms(Math.max(...all))}** | max **${ms(Math.max(...cpuAll))}** |`,
  ].join('\n');
}
