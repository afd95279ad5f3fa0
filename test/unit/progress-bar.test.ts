import { describe, expect, it } from 'vitest';
import { createProgressBar, formatDuration, renderProgress } from '../../src/cli/progress-bar.js';

describe('renderProgress', () => {
  it('shows done/total, the percentage, the rate and the time left', () => {
    expect(renderProgress(1200, 4800, 2000)).toBe('[██████░░░░░░░░░░░░░░░░░░]  1200/4800  25%  600/s  ETA 0:06');
  });

  it('before any rate is known shows no rate or ETA; before any total, a question mark', () => {
    expect(renderProgress(0, 10, 0)).toBe('[░░░░░░░░░░░░░░░░░░░░░░░░]  0/10  0%');
    expect(renderProgress(0, undefined, 0)).toBe('[░░░░░░░░░░░░░░░░░░░░░░░░]  0/?  0%');
  });

  it('never shows more done than total when contacts were added during the walk', () => {
    expect(renderProgress(105, 100, 1000)).toBe('[████████████████████████]  105/105  100%  105/s  ETA 0:00');
  });

  it('an empty export is complete', () => {
    expect(renderProgress(0, 0, 10)).toBe('[████████████████████████]  0/0  100%');
  });
});

describe('formatDuration', () => {
  it('is m:ss below an hour and h:mm:ss from an hour, rounding up', () => {
    expect(formatDuration(0)).toBe('0:00');
    expect(formatDuration(59.2)).toBe('1:00');
    expect(formatDuration(3599)).toBe('59:59');
    expect(formatDuration(3600 + 62)).toBe('1:01:02');
  });
});

describe('createProgressBar', () => {
  it('redraws in place at most ten times a second, and ends its line when finished', () => {
    let clock = 0;
    const writes: string[] = [];
    const bar = createProgressBar(
      (text) => writes.push(text),
      () => clock,
    );
    bar.setTotal(1000);
    for (let done = 1; done <= 1000; done++) {
      clock += 1; // one contact a millisecond: one second in all
      bar.update(done);
    }
    bar.finish(1000);
    const draws = writes.filter((text) => text.startsWith('\r'));
    expect(draws.length).toBeLessThanOrEqual(11);
    expect(draws.length).toBeGreaterThanOrEqual(10);
    expect(draws.every((text) => text.endsWith('\x1b[K'))).toBe(true);
    expect(draws.at(-1)).toContain('1000/1000  100%');
    expect(writes.at(-1)).toBe('\n');
  });
});
