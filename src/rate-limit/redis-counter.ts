import { Redis } from 'ioredis';
import type { WindowHit } from '../domain/rate-limit.js';
import type { RequestCounter } from './request-counter.js';

/** A rate-limit check may add at most this much to a request when Redis is slow or gone. */
export const REDIS_COMMAND_TIMEOUT_MS = 250;

/**
 * The same window as countRequest() in src/domain/rate-limit.ts, done atomically inside Redis: the first
 * request of a window creates the counter with the window's length as its expiry, so the window ends on
 * Redis's clock whichever instance counted. A counter found without an expiry gets one.
 */
const COUNT_REQUEST_SCRIPT = `
local count = redis.call('INCR', KEYS[1])
local ttl = redis.call('PTTL', KEYS[1])
if ttl < 0 then
  redis.call('PEXPIRE', KEYS[1], ARGV[1])
  ttl = tonumber(ARGV[1])
end
return {count, ttl}
`;

/** A window's count and time left, in one round trip; a key that does not exist reads as 0 (and PTTL -2). */
const PEEK_SCRIPT = `
local count = tonumber(redis.call('GET', KEYS[1]) or '0')
return {count, redis.call('PTTL', KEYS[1])}
`;

type CountingRedis = Redis & {
  countRequest(key: string, windowMs: number): Promise<[number, number]>;
  peekCount(key: string): Promise<[number, number]>;
};

/**
 * Counts in Redis, shared by every instance that uses the same URL and prefix. Resolves once the first
 * connection attempt has succeeded or failed, so a server starts counting from its first request; a Redis
 * that is down does not stop start-up. After that it never waits for Redis: without a connection a hit
 * fails at once (no offline queue), and a slow reply fails after REDIS_COMMAND_TIMEOUT_MS, so the caller
 * can fail open quickly.
 */
export async function connectRedisCounter(options: { url: string; prefix: string; windowMs: number }): Promise<RequestCounter> {
  const redis = new Redis(options.url, {
    enableOfflineQueue: false,
    commandTimeout: REDIS_COMMAND_TIMEOUT_MS,
    connectTimeout: 1_000,
    maxRetriesPerRequest: 0,
  }) as CountingRedis;
  redis.defineCommand('countRequest', { numberOfKeys: 1, lua: COUNT_REQUEST_SCRIPT });
  redis.defineCommand('peekCount', { numberOfKeys: 1, lua: PEEK_SCRIPT });
  // Failed hits are reported by the limiter; this listener only keeps a lost connection from
  // becoming an unhandled 'error' event. ioredis reconnects on its own.
  redis.on('error', () => undefined);
  await new Promise<void>((resolve) => {
    const settled = () => {
      redis.off('ready', settled).off('error', settled);
      resolve();
    };
    redis.once('ready', settled).once('error', settled);
  });

  return {
    kind: 'redis',
    async hit(key): Promise<WindowHit> {
      const [count, resetInMs] = await redis.countRequest(`${options.prefix}${key}`, options.windowMs);
      return { count, resetInMs };
    },
    async peek(key): Promise<WindowHit> {
      const [count, resetInMs] = await redis.peekCount(`${options.prefix}${key}`);
      return { count, resetInMs: Math.max(0, resetInMs) };
    },
    async close() {
      redis.disconnect();
    },
  };
}
