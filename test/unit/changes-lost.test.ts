import { describe, expect, it } from 'vitest';
import { changesLost } from '../../src/domain/changes.js';

const DAY = 86_400_000;
const NOW = Date.parse('2026-11-24T00:00:00.000Z');

describe('changesLost: the one rule for following the change log', () => {
  const log = { changesFrom: 10, currentSeq: 20 };

  it('nothing is lost while changes have waited at most the retention and the log is complete from the position', () => {
    expect(changesLost({ seq: 10, waitingSince: NOW - 30 * DAY }, log, 30 * DAY, NOW)).toBeNull();
    expect(changesLost({ seq: 10, waitingSince: NOW }, null, 30 * DAY, NOW)).toBeNull();
  });

  it('names the retention first, then a log cut short (TRUNCATE) before the position', () => {
    expect(changesLost({ seq: 10, waitingSince: NOW - 30 * DAY - 1 }, log, 30 * DAY, NOW)).toBe('retention');
    expect(changesLost({ seq: 9, waitingSince: NOW - 30 * DAY - 1 }, log, 30 * DAY, NOW)).toBe('retention');
    expect(changesLost({ seq: 9, waitingSince: NOW }, log, 30 * DAY, NOW)).toBe('truncated');
  });
});
