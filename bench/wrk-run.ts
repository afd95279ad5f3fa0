/** One run of the load generator, wrk, and what the bench reads from its output. */
import { execFileSync, spawnSync } from 'node:child_process';
import { join, resolve } from 'node:path';

const SCRIPTS = resolve(import.meta.dirname, 'wrk');

export interface WrkFigures {
  rps: number;
  p50: number;
  p99: number;
  /** Requests wrk saw answered ("N requests in"). */
  requests: number;
}

/** Fails before any server starts when wrk is not installed (a failure mid-run would leave the ceiling's server behind). */
export function requireWrk(): void {
  if (spawnSync('wrk', ['-v']).error)
    throw new Error('wrk is not installed: `apt-get install wrk` (Debian) or see https://github.com/wg/wrk');
}

export function wrk(
  port: number,
  script: string,
  env: Record<string, string>,
  options: { connections: number; seconds: number },
): WrkFigures {
  const output = execFileSync(
    'wrk',
    ['-t1', `-c${options.connections}`, `-d${options.seconds}s`, '--latency', '-s', join(SCRIPTS, script), `http://127.0.0.1:${port}`],
    { env: { ...process.env, ...env }, encoding: 'utf8' },
  );
  const errors = /Non-2xx or 3xx responses: (\d+)/.exec(output);
  if (errors) throw new Error(`wrk saw ${errors[1]} error responses (a 429 means the rate limit was met):\n${output}`);
  const latency = (percent: string) => {
    const match = new RegExp(`\\s${percent}%\\s+([\\d.]+)(us|ms|s)`).exec(output);
    if (!match) throw new Error(`no ${percent}% latency in wrk output:\n${output}`);
    return Number(match[1]) * { us: 0.001, ms: 1, s: 1000 }[match[2] as 'us' | 'ms' | 's'];
  };
  const requests = /(\d+) requests in /.exec(output);
  if (!requests) throw new Error(`no request count in wrk output:\n${output}`);
  return {
    rps: Number(/Requests\/sec:\s+([\d.]+)/.exec(output)![1]),
    p50: latency('50'),
    p99: latency('99'),
    requests: Number(requests[1]),
  };
}
