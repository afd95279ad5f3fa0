import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../src/config.js';

function configError(env: NodeJS.ProcessEnv): string {
  try {
    loadConfig(env);
  } catch (error) {
    expect(error).toBeInstanceOf(ConfigError);
    return (error as ConfigError).message;
  }
  throw new Error('expected loadConfig to throw, but it returned');
}

describe('loadConfig rate limit', () => {
  it('reads RATE_LIMIT_PER_MINUTE, where 0 turns the limit off', () => {
    expect(loadConfig({ RATE_LIMIT_PER_MINUTE: '120' }).rateLimit.perMinute).toBe(120);
    expect(loadConfig({ RATE_LIMIT_PER_MINUTE: ' 0 ' }).rateLimit.perMinute).toBe(0);
  });

  it.each(['-1', '1.5', '1e3', 'ten', '1000001'])('refuses RATE_LIMIT_PER_MINUTE=%s, naming the variable', (value) => {
    expect(configError({ RATE_LIMIT_PER_MINUTE: value })).toBe(
      `RATE_LIMIT_PER_MINUTE must be an integer from 0 to 1000000; got "${value}"`,
    );
  });

  it('reads REDIS_URL and RATE_LIMIT_REDIS_PREFIX', () => {
    const { rateLimit } = loadConfig({ REDIS_URL: 'rediss://:secret@cache.internal:6380/2', RATE_LIMIT_REDIS_PREFIX: 'prod:rl:' });
    expect(rateLimit).toMatchObject({ perMinute: 600, redisUrl: 'rediss://:secret@cache.internal:6380/2', redisPrefix: 'prod:rl:' });
  });

  it('reads the OAuth limits per client address, 0 turning one off, and names a bad one', () => {
    const { rateLimit } = loadConfig({ OAUTH_REGISTRATIONS_PER_MINUTE: '0', OAUTH_AUTHORIZATIONS_PER_MINUTE: '300' });
    expect(rateLimit).toMatchObject({ oauthRegistrationsPerMinute: 0, oauthAuthorizationsPerMinute: 300 });
    expect(configError({ OAUTH_AUTHORIZATIONS_PER_MINUTE: '-1' })).toBe(
      'OAUTH_AUTHORIZATIONS_PER_MINUTE must be an integer from 0 to 1000000; got "-1"',
    );
  });

  it('refuses a REDIS_URL that is not redis:// without echoing it (it may hold a password)', () => {
    const message = configError({ REDIS_URL: 'http://:hunter2@cache:6379' });
    expect(message).toBe('REDIS_URL must be a redis:// or rediss:// URL');
    expect(message).not.toContain('hunter2');
  });

  it('refuses a RATE_LIMIT_REDIS_PREFIX with spaces or other characters', () => {
    expect(configError({ RATE_LIMIT_REDIS_PREFIX: 'a b' })).toMatch(/^RATE_LIMIT_REDIS_PREFIX must be 1–64 letters/);
  });
});

describe('loadConfig metrics', () => {
  it('serves metrics on a port of its own, on 127.0.0.1 unless METRICS_HOST says otherwise', () => {
    expect(loadConfig({ METRICS_PORT: '9464' }).metrics).toEqual({ port: 9464, host: '127.0.0.1', token: null });
    expect(loadConfig({ METRICS_PORT: '0', METRICS_HOST: '10.0.0.5' }).metrics).toEqual({ port: 0, host: '10.0.0.5', token: null });
  });

  it('or on the main port behind METRICS_TOKEN', () => {
    expect(loadConfig({ METRICS_TOKEN: 'a-long-enough-token' }).metrics.token).toBe('a-long-enough-token');
  });

  it('refuses both at once, a bad port, and a short token without echoing it', () => {
    expect(configError({ METRICS_PORT: '9464', METRICS_TOKEN: 'a-long-enough-token' })).toBe(
      'METRICS_TOKEN and METRICS_PORT are alternatives: set one of them',
    );
    expect(configError({ METRICS_PORT: '70000' })).toBe('METRICS_PORT must be a port number from 0 to 65535; got "70000"');
    const short = configError({ METRICS_TOKEN: 'short-secret' });
    expect(short).toBe('METRICS_TOKEN must be 16–256 visible ASCII characters, no spaces');
    expect(short).not.toContain('short-secret');
  });
});

describe('loadConfig timeouts', () => {
  it('reads REQUEST_TIMEOUT_MS, DB_STATEMENT_TIMEOUT_MS and SHUTDOWN_TIMEOUT_MS', () => {
    const config = loadConfig({ REQUEST_TIMEOUT_MS: '2500', DB_STATEMENT_TIMEOUT_MS: '1000', SHUTDOWN_TIMEOUT_MS: '30000' });
    expect([config.requestTimeoutMs, config.dbStatementTimeoutMs, config.shutdownTimeoutMs]).toEqual([2500, 1000, 30000]);
  });

  it.each(['REQUEST_TIMEOUT_MS', 'DB_STATEMENT_TIMEOUT_MS', 'SHUTDOWN_TIMEOUT_MS'])('refuses 0 and text for %s', (name) => {
    expect(configError({ [name]: '0' })).toBe(`${name} must be an integer from 1 to 3600000; got "0"`);
    expect(configError({ [name]: '5s' })).toBe(`${name} must be an integer from 1 to 3600000; got "5s"`);
  });
});

describe('loadConfig caches', () => {
  it('reads KEY_CACHE_TTL_MS and LISTING_CACHE_TTL_MS, where 0 turns each cache off', () => {
    const config = loadConfig({ KEY_CACHE_TTL_MS: '0', LISTING_CACHE_TTL_MS: '900' });
    expect([config.keyCacheTtlMs, config.listingCacheTtlMs]).toEqual([0, 900]);
  });

  it.each(['KEY_CACHE_TTL_MS', 'LISTING_CACHE_TTL_MS'])('refuses %s over 900 ms: changes must show within one second', (name) => {
    expect(configError({ [name]: '901' })).toBe(`${name} must be an integer from 0 to 900; got "901"`);
    expect(configError({ [name]: '-1' })).toBe(`${name} must be an integer from 0 to 900; got "-1"`);
  });
});

describe('loadConfig page caches', () => {
  it('reads PAGE_CACHE_MB, COMPRESSED_PAGE_CACHE_MB and PLAIN_PAGE_CACHE_MB as bytes', () => {
    const config = loadConfig({ PAGE_CACHE_MB: '8', COMPRESSED_PAGE_CACHE_MB: '64', PLAIN_PAGE_CACHE_MB: '1' });
    expect(config.pageCaches).toEqual({ documentBytes: 8 * 1024 * 1024, compressedBytes: 64 * 1024 * 1024, plainBytes: 1024 * 1024 });
  });

  it.each(['PAGE_CACHE_MB', 'COMPRESSED_PAGE_CACHE_MB', 'PLAIN_PAGE_CACHE_MB'])('refuses 0 and fractions for %s', (name) => {
    expect(configError({ [name]: '0' })).toBe(`${name} must be an integer from 1 to 65536; got "0"`);
    expect(configError({ [name]: '1.5' })).toBe(`${name} must be an integer from 1 to 65536; got "1.5"`);
  });
});

describe('loadConfig WORKER_HEAP_MB', () => {
  it('reads the heap limit of each worker, from 64 MB', () => {
    expect(loadConfig({ WORKER_HEAP_MB: '256' }).workerHeapMb).toBe(256);
    expect(configError({ WORKER_HEAP_MB: '32' })).toBe('WORKER_HEAP_MB must be an integer from 64 to 65536; got "32"');
  });
});

describe('loadConfig MCP_INFLIGHT_MB', () => {
  it('reads what MCP answers may hold in a process, from 2 MB: one whole batch', () => {
    expect(loadConfig({ MCP_INFLIGHT_MB: '32' }).mcpInflightMb).toBe(32);
    expect(configError({ MCP_INFLIGHT_MB: '1' })).toBe('MCP_INFLIGHT_MB must be an integer from 2 to 65536; got "1"');
  });
});

describe('loadConfig WRITE_STALL_TIMEOUT_MS and WRITE_BACKLOG_MAX_KB', () => {
  it('reads when a connection whose client stops reading is closed', () => {
    const config = loadConfig({ WRITE_STALL_TIMEOUT_MS: '30000', WRITE_BACKLOG_MAX_KB: '4096' });
    expect([config.writeStallTimeoutMs, config.writeBacklogMaxKb]).toEqual([30_000, 4096]);
    expect(configError({ WRITE_STALL_TIMEOUT_MS: '0' })).toBe('WRITE_STALL_TIMEOUT_MS must be an integer from 100 to 3600000; got "0"');
    expect(configError({ WRITE_BACKLOG_MAX_KB: '8' })).toBe('WRITE_BACKLOG_MAX_KB must be an integer from 16 to 1048576; got "8"');
  });
});

describe('loadConfig BODY_READ_TIMEOUT_MS', () => {
  it('reads how long a request body may stall, 100 ms to an hour', () => {
    expect(loadConfig({ BODY_READ_TIMEOUT_MS: '1500' }).bodyReadTimeoutMs).toBe(1500);
    expect(configError({ BODY_READ_TIMEOUT_MS: '99' })).toBe('BODY_READ_TIMEOUT_MS must be an integer from 100 to 3600000; got "99"');
  });
});

describe('loadConfig MAX_INFLIGHT_REQUESTS', () => {
  it('reads how many requests one process may have in progress', () => {
    expect(loadConfig({ MAX_INFLIGHT_REQUESTS: '64' }).maxInflightRequests).toBe(64);
    expect(configError({ MAX_INFLIGHT_REQUESTS: '0' })).toBe('MAX_INFLIGHT_REQUESTS must be an integer from 1 to 1000000; got "0"');
  });
});

describe('loadConfig TRUST_PROXY', () => {
  it.each([
    ['', false],
    ['false', false],
    ['TRUE', true],
    ['10.0.0.1', ['10.0.0.1']],
    ['10.0.0.0/8, 192.168.1.0/24 ,::1', ['10.0.0.0/8', '192.168.1.0/24', '::1']],
    ['loopback,fd00::/8', ['loopback', 'fd00::/8']],
    ['::ffff:10.0.0.0/104', ['::ffff:10.0.0.0/104']],
  ])('reads %j', (value, expected) => {
    expect(loadConfig({ TRUST_PROXY: value }).trustProxy).toEqual(expected);
  });

  it.each(['10.0.0.300', '10.0.0.0/33', 'proxy.internal', '10.0.0.1/8/2', 'fd00::/129'])('refuses %s', (value) => {
    expect(configError({ TRUST_PROXY: value })).toBe(
      `TRUST_PROXY must be true, false, or comma-separated IP addresses, CIDR ranges or loopback/linklocal/uniquelocal; got "${value}"`,
    );
  });

  it('refuses a hop count, which cannot tell a proxy from a client connecting directly', () => {
    expect(configError({ TRUST_PROXY: '2' })).toMatch(/^TRUST_PROXY takes the proxies' addresses or CIDR ranges, not a hop count/);
  });

  it('refuses an IPv4-mapped range with an IPv4-sized prefix, which would trust every IPv4 client', () => {
    expect(configError({ TRUST_PROXY: '::ffff:10.0.0.0/8' })).toMatch(
      /^TRUST_PROXY "::ffff:10.0.0.0\/8": an IPv4-mapped range needs a prefix of 96 or more/,
    );
  });
});

describe('loadConfig CORS_ORIGINS and HSTS_MAX_AGE', () => {
  it('reads comma-separated origins, exactly as browsers send them', () => {
    expect(loadConfig({ CORS_ORIGINS: 'https://app.example.com, http://localhost:5173' }).corsOrigins).toEqual([
      'https://app.example.com',
      'http://localhost:5173',
    ]);
  });

  it.each([
    '*',
    'https://app.example.com/',
    'https://app.example.com/path',
    'app.example.com',
    'ftp://files.example.com',
    'https://APP.example.com',
  ])('refuses %s', (origin) => {
    expect(configError({ CORS_ORIGINS: origin })).toMatch(/^CORS_ORIGINS must list origins exactly as browsers send them/);
  });

  it('sends HSTS only when HSTS_MAX_AGE is set', () => {
    expect(loadConfig({}).hstsMaxAgeSeconds).toBeNull();
    expect(loadConfig({ HSTS_MAX_AGE: '31536000' }).hstsMaxAgeSeconds).toBe(31_536_000);
    expect(configError({ HSTS_MAX_AGE: 'one year' })).toBe('HSTS_MAX_AGE must be an integer from 0 to 1000000000; got "one year"');
  });
});
