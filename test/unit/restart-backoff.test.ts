import { describe, expect, it } from 'vitest';
import { MAX_RESTART_DELAY_MS, restartDelayMs } from '../../src/cluster/restart-backoff.js';

describe('restartDelayMs', () => {
  it('replaces a worker that had been running at once', () => {
    expect(restartDelayMs(0)).toBe(0);
  });

  it('doubles the wait for each worker in a row that exited soon after starting', () => {
    expect([1, 2, 3, 4, 5, 6].map(restartDelayMs)).toEqual([250, 500, 1000, 2000, 4000, 8000]);
  });

  it('never waits more than 10 s, however long the failures go on', () => {
    expect(restartDelayMs(7)).toBe(MAX_RESTART_DELAY_MS);
    expect(restartDelayMs(1000)).toBe(MAX_RESTART_DELAY_MS);
  });
});
