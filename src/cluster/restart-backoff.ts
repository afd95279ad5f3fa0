/** A worker that lived this long before exiting counts as having started: the next restart is immediate again. */
export const STABLE_WORKER_MS = 10_000;
const FIRST_RESTART_DELAY_MS = 250;
export const MAX_RESTART_DELAY_MS = 10_000;

/**
 * How long to wait before replacing a worker that exited, given how many workers in a row exited before
 * STABLE_WORKER_MS (this one included): the first crash of a running service is replaced at once, a worker that
 * cannot start is retried at 250 ms, 500 ms, 1 s … up to 10 s, so a crash loop costs little CPU and few log lines.
 */
export function restartDelayMs(earlyExitsInARow: number): number {
  if (earlyExitsInARow <= 1) return earlyExitsInARow === 1 ? FIRST_RESTART_DELAY_MS : 0;
  return Math.min(FIRST_RESTART_DELAY_MS * 2 ** (earlyExitsInARow - 1), MAX_RESTART_DELAY_MS);
}
