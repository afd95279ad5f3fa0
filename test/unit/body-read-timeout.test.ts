import { describe, expect, it } from 'vitest';
import { bodyOverdue, type BodyProgress } from '../../src/web/body-read-timeout.js';

const TIMEOUT_MS = 30_000;
const MIB = 1024 * 1024;

/** A body that began at 0 and has brought `bytes` by `lastProgressAt`, checked at `now`. */
const overdue = (now: number, progress: Partial<BodyProgress>) =>
  bodyOverdue({ startedAt: 0, bytes: 0, lastProgressAt: 0, heldMs: 0, ...progress }, now, TIMEOUT_MS);

describe('bodyOverdue: when a request body has kept the server waiting too long', () => {
  it.each([
    ['nothing yet, within the timeout', 29_999, {}, false],
    ['nothing at all for the timeout', 30_000, {}, true],
    ['a few bytes, then a stall for the timeout', 31_000, { bytes: 4, lastProgressAt: 1_000 }, true],
    ['one byte a second: past the timeout plus a second per 64 KiB', 30_001, { bytes: 30, lastProgressAt: 30_000 }, true],
    [
      '32 KiB/s, half the pace: refused once it has taken twice the timeout',
      60_000,
      { bytes: 32 * 1024 * 60, lastProgressAt: 60_000 },
      true,
    ],
    ['32 KiB/s, before that', 59_000, { bytes: 32 * 1024 * 59, lastProgressAt: 59_000 }, false],
    ['1 MiB/s for ten minutes (a large import)', 600_000, { bytes: 600 * MIB, lastProgressAt: 600_000 }, false],
    ['1 MiB/s, then a stall for the timeout', 640_000, { bytes: 600 * MIB, lastProgressAt: 610_000 }, true],
    ['a stall while the server held the client up for most of it', 60_000, { bytes: 10, lastProgressAt: 59_000, heldMs: 58_000 }, false],
  ] as const)('%s', (_, now, progress, expected) => {
    expect(overdue(now, progress)).toBe(expected);
  });
});
