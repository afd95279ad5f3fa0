import type { FastifyRequest } from 'fastify';
import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { AuthError, type Principal } from '../../src/auth/authenticator.js';
import { RATE_LIMIT_WINDOW_MS } from '../../src/domain/rate-limit.js';
import { createAuthFailureLimit } from '../../src/web/auth-failure-limit.js';
import { createMetrics } from '../../src/metrics/metrics.js';
import { createMemoryCounter } from '../../src/rate-limit/memory-counter.js';
import type { RequestCounter } from '../../src/rate-limit/request-counter.js';

const LIMIT = 3;
const ADDRESS = '192.0.2.7';
const request = { ip: ADDRESS, log: pino({ level: 'silent' }) } as unknown as FastifyRequest;
const principal = { keyId: 'k' } as unknown as Principal;
const admitted = async () => principal;
const wrongKey = async (): Promise<Principal> => {
  throw new AuthError(401, 'Invalid or inactive API key', 'unknown');
};

/** The shared counter as a process sees it (the primary's or Redis), with how often this process asked it. */
function sharedCounter() {
  const counter = createMemoryCounter({ windowMs: RATE_LIMIT_WINDOW_MS });
  const asked = { peeks: 0, hits: 0 };
  const seen: RequestCounter = {
    ...counter,
    peek: (key) => ((asked.peeks += 1), counter.peek(key)),
    hit: (key) => ((asked.hits += 1), counter.hit(key)),
  };
  return { counter, seen, asked };
}

const status = (outcome: Promise<unknown>) =>
  outcome.then(
    () => 200,
    (error: { status?: number; statusCode?: number }) => error.status ?? error.statusCode,
  );

describe('the failed-authentication limit in one process of several', () => {
  it('a right key costs one look at the shared counter a second, not one a request', async () => {
    const { seen, asked } = sharedCounter();
    const limit = createAuthFailureLimit({ perMinute: LIMIT, counter: seen, metrics: createMetrics({}) });
    for (let i = 0; i < 100; i += 1) await limit(request, admitted);
    expect(asked).toEqual({ peeks: 1, hits: 0 });
  });

  it('a failure here forgets what the process knew: the next request looks again, and past the limit is refused', async () => {
    const { seen, asked } = sharedCounter();
    const limit = createAuthFailureLimit({ perMinute: LIMIT, counter: seen, metrics: createMetrics({}) });
    await limit(request, admitted);
    const statuses = [];
    for (let i = 0; i < LIMIT + 1; i += 1) statuses.push(await status(limit(request, wrongKey)));
    expect(statuses).toEqual([401, 401, 401, 429]);
    // Refused before the key is read, a right one too, without asking the counter again.
    const asks = { ...asked };
    expect(await status(limit(request, admitted))).toBe(429);
    expect(asked).toEqual(asks);
  });

  it('failures counted by other processes refuse a wrong key here at once, and the address once its standing is looked at again', async () => {
    const { counter, seen } = sharedCounter();
    const limit = createAuthFailureLimit({ perMinute: LIMIT, counter: seen, metrics: createMetrics({}) });
    await limit(request, admitted);
    for (let i = 0; i < LIMIT; i += 1) await counter.hit(`auth-failure:${ADDRESS}`);
    expect(await status(limit(request, wrongKey))).toBe(429);
    expect(await status(limit(request, admitted))).toBe(429);
  });
});
