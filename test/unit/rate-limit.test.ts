import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { countRequest, decide, RATE_LIMIT_WINDOW_MS } from '../../src/domain/rate-limit.js';
import { createMetrics } from '../../src/metrics/metrics.js';
import { createRateLimiter } from '../../src/web/rate-limit.js';
import { createMemoryCounter } from '../../src/rate-limit/memory-counter.js';

describe('countRequest: fixed windows that open at a key’s first request', () => {
  it('opens a window of the full length at the first request', () => {
    expect(countRequest(undefined, 1_000, 60_000)).toEqual({ count: 1, endsAt: 61_000 });
  });

  it('adds later requests to the running window without moving its end', () => {
    expect(countRequest({ count: 4, endsAt: 61_000 }, 60_999, 60_000)).toEqual({ count: 5, endsAt: 61_000 });
  });

  it('opens a new window at or after the old one’s end', () => {
    expect(countRequest({ count: 600, endsAt: 61_000 }, 61_000, 60_000)).toEqual({ count: 1, endsAt: 121_000 });
    expect(countRequest({ count: 600, endsAt: 61_000 }, 500_000, 60_000)).toEqual({ count: 1, endsAt: 560_000 });
  });
});

describe('decide: the limit-th request passes, the next is refused', () => {
  it.each([
    [1, { allowed: true, remaining: 2 }],
    [3, { allowed: true, remaining: 0 }],
    [4, { allowed: false, remaining: 0 }],
    [100, { allowed: false, remaining: 0 }],
  ])('count %i of limit 3', (count, expected) => {
    expect(decide(3, { count, resetInMs: 30_000 })).toEqual({ ...expected, limit: 3, resetSeconds: 30 });
  });

  it('rounds the reset up to whole seconds, and never says 0', () => {
    expect(decide(3, { count: 1, resetInMs: 59_001 }).resetSeconds).toBe(60);
    expect(decide(3, { count: 1, resetInMs: 1 }).resetSeconds).toBe(1);
    expect(decide(3, { count: 1, resetInMs: 0 }).resetSeconds).toBe(1);
  });
});

describe('createMemoryCounter', () => {
  it('counts per key, each key in its own window', async () => {
    let now = 0;
    const counter = createMemoryCounter({ windowMs: RATE_LIMIT_WINDOW_MS, now: () => now });
    expect(await counter.hit('a')).toEqual({ count: 1, resetInMs: 60_000 });
    now = 10_000;
    expect(await counter.hit('a')).toEqual({ count: 2, resetInMs: 50_000 });
    expect(await counter.hit('b')).toEqual({ count: 1, resetInMs: 60_000 });
    now = 60_000;
    expect(await counter.hit('a')).toEqual({ count: 1, resetInMs: 60_000 });
    expect(await counter.hit('b')).toEqual({ count: 2, resetInMs: 10_000 });
  });

  it('peeks at a key’s running window without counting, and reads an ended or unknown one as 0', async () => {
    let now = 0;
    const counter = createMemoryCounter({ windowMs: RATE_LIMIT_WINDOW_MS, now: () => now });
    expect(await counter.peek('a')).toEqual({ count: 0, resetInMs: 0 });
    await counter.hit('a');
    now = 15_000;
    expect(await counter.peek('a')).toEqual({ count: 1, resetInMs: 45_000 });
    expect(await counter.peek('a')).toEqual({ count: 1, resetInMs: 45_000 });
    now = 60_000;
    expect(await counter.peek('a')).toEqual({ count: 0, resetInMs: 0 });
  });
});

describe('createRateLimiter check: whether one more would pass, counting nothing', () => {
  it('allows while the window has room for one more, then refuses with the time left', async () => {
    let now = 0;
    const counter = createMemoryCounter({ windowMs: RATE_LIMIT_WINDOW_MS, now: () => now });
    const limiter = createRateLimiter({ perMinute: 2, counter, metrics: createMetrics(), now: () => now });
    const log = pino({ enabled: false });
    expect(await limiter.check('k', log)).toMatchObject({ allowed: true });
    await limiter.count('k', log);
    expect(await limiter.check('k', log)).toMatchObject({ allowed: true });
    await limiter.count('k', log);
    now = 20_000;
    expect(await limiter.check('k', log)).toMatchObject({ allowed: false, retryAfterSeconds: 40 });
    expect(await counter.peek('k')).toEqual({ count: 2, resetInMs: 40_000 });
  });
});
