import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';

/** The pids of a process's children (ps --ppid). */
export function childPids(pid: number): number[] {
  try {
    return execFileSync('ps', ['-o', 'pid=', '--ppid', String(pid)], { encoding: 'utf8' })
      .split('\n')
      .map((line) => Number(line.trim()))
      .filter((child) => child > 0);
  } catch {
    return [];
  }
}

/** A process and all its descendants. */
export function processTree(pid: number): number[] {
  return [pid, ...childPids(pid).flatMap(processTree)];
}

/** True while the process runs; a zombie (exited, not yet reaped by whoever adopted it) has stopped. */
export function isRunning(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3) !== 'Z';
  } catch {
    return false;
  }
}

/** Waits until none of `pids` runs, or `withinMs` has passed; returns those still running. */
export async function stillRunningAfter(pids: readonly number[], withinMs: number): Promise<number[]> {
  const deadline = Date.now() + withinMs;
  for (;;) {
    const running = pids.filter(isRunning);
    if (running.length === 0 || Date.now() >= deadline) return running;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/** Cleanup: SIGKILLs whatever of `pids` still runs. */
export function killAll(pids: readonly number[]): void {
  for (const pid of pids.filter(isRunning)) {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      // gone meanwhile
    }
  }
}
