import { resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig, parsePort } from '../../src/config.js';

function configError(env: NodeJS.ProcessEnv): ConfigError {
  try {
    loadConfig(env);
  } catch (error) {
    expect(error).toBeInstanceOf(ConfigError);
    return error as ConfigError;
  }
  throw new Error('expected loadConfig to throw, but it returned');
}

describe('loadConfig defaults', () => {
  it('gives SQLite at ./data/contacts.db, 127.0.0.1:3000, prefix cnt and level info for an empty environment', () => {
    expect(loadConfig({})).toStrictEqual({
      database: { kind: 'sqlite', path: resolve('./data/contacts.db') },
      databaseRead: null,
      host: '127.0.0.1',
      port: 3000,
      apiKeyPrefix: 'cnt',
      logLevel: 'info',
      rateLimit: {
        perMinute: 600,
        authFailuresPerMinute: 60,
        redisUrl: null,
        redisPrefix: 'contacts-api:rate-limit:',
        oauthRegistrationsPerMinute: 20,
        oauthAuthorizationsPerMinute: 60,
      },
      metrics: { port: null, host: '127.0.0.1', token: null },
      requestTimeoutMs: 10_000,
      bodyReadTimeoutMs: 30_000,
      mcpInflightMb: 8,
      maxInflightRequests: 256,
      writeStallTimeoutMs: 10_000,
      writeBacklogMaxKb: 1024,
      workers: null,
      keyCacheTtlMs: 500,
      listingCacheTtlMs: 250,
      pageCaches: { documentBytes: 4 * 1024 * 1024, compressedBytes: 32 * 1024 * 1024, plainBytes: 4 * 1024 * 1024 },
      changesRetentionDays: 30,
      workerHeapMb: 128,
      dbStatementTimeoutMs: 5_000,
      dbPool: { size: 3, queueLimit: 64 },
      dbPooler: 'auto',
      shutdownTimeoutMs: 10_000,
      trustProxy: false,
      corsOrigins: [],
      hstsMaxAgeSeconds: null,
      oauth: {
        issuer: 'http://127.0.0.1:3000',
        external: null,
        consent: { productName: 'Contacts', accentColor: '#2f5bd3', logoUrl: null, apiKeysUrl: null },
        clientMetadataAllowPrivate: false,
      },
      contactUrlTemplate: null,
      openApi: { publicUrl: '/', contact: null },
      admin: { token: null, host: '127.0.0.1', port: 3001, bodyLimitMb: 64, importMaxRecords: 500_000 },
      webhooks: {
        retrySchedule: [5_000, 300_000, 1_800_000, 7_200_000, 18_000_000, 36_000_000, 50_400_000, 72_000_000, 86_400_000],
        timeoutMs: 15_000,
        allowPrivateUrls: false,
      },
    });
  });

  it('treats empty and blank variables as unset', () => {
    expect(loadConfig({ DATABASE_URL: '', HOST: ' ', PORT: '', API_KEY_PREFIX: '  ', LOG_LEVEL: '\t' })).toStrictEqual(loadConfig({}));
  });

  it('returns a frozen object', () => {
    const config = loadConfig({});
    expect(Object.isFrozen(config)).toBe(true);
    expect(() => {
      (config as { port: number }).port = 1;
    }).toThrow(TypeError);
  });

  it('reads the environment it is given, not process.env', () => {
    expect(loadConfig({ PORT: '4321' }).port).toBe(4321);
  });
});

describe('loadConfig HOST', () => {
  it('reads HOST, trimmed', () => {
    expect(loadConfig({ HOST: ' 0.0.0.0 ' }).host).toBe('0.0.0.0');
    expect(loadConfig({ HOST: '::' }).host).toBe('::');
  });
});

describe('loadConfig AUTH_FAILURES_PER_MINUTE', () => {
  it('reads failed authentications per client address per minute, 0 for none, whatever RATE_LIMIT_PER_MINUTE says', () => {
    expect(loadConfig({ AUTH_FAILURES_PER_MINUTE: '10', RATE_LIMIT_PER_MINUTE: '0' }).rateLimit).toMatchObject({
      perMinute: 0,
      authFailuresPerMinute: 10,
    });
    expect(loadConfig({ AUTH_FAILURES_PER_MINUTE: '0' }).rateLimit).toMatchObject({ perMinute: 600, authFailuresPerMinute: 0 });
  });

  it.each(['-1', 'ten', '1.5', '1000001'])('stops at %j, naming the variable', (value) => {
    expect(() => loadConfig({ AUTH_FAILURES_PER_MINUTE: value })).toThrow(/^AUTH_FAILURES_PER_MINUTE must be an integer from 0 to 1000000/);
  });
});

describe('loadConfig PORT', () => {
  it.each([
    ['0', 0],
    ['1', 1],
    ['80', 80],
    ['8080', 8080],
    ['65535', 65535],
    [' 8080 ', 8080],
    ['08080', 8080],
  ])('reads PORT %j as %i', (text, port) => {
    expect(loadConfig({ PORT: text }).port).toBe(port);
  });

  it.each(['65536', '99999', '100000', '-1', '+80', 'abc', '80abc', '8.5', '1e3', '0x50', '80 80'])(
    'refuses PORT %j with a ConfigError naming PORT',
    (text) => {
      expect(configError({ PORT: text }).message).toBe(`PORT must be a port number from 0 to 65535; got "${text}"`);
    },
  );
});

describe('parsePort', () => {
  it('gives 3000 for undefined, empty or blank', () => {
    expect(parsePort(undefined, 'PORT')).toBe(3000);
    expect(parsePort('', 'PORT')).toBe(3000);
    expect(parsePort('  ', 'PORT')).toBe(3000);
  });

  it('names the variable it is given in its error', () => {
    expect(() => parsePort('x', 'ADMIN_PORT')).toThrow(new ConfigError('ADMIN_PORT must be a port number from 0 to 65535; got "x"'));
    expect(() => parsePort('x', 'ADMIN_PORT')).toThrow(ConfigError);
  });
});

describe('loadConfig API_KEY_PREFIX', () => {
  it.each(['cnt', 'ab', 'a1', 'acme', 'abcdefghijklmnop'])('accepts %j', (prefix) => {
    expect(loadConfig({ API_KEY_PREFIX: prefix }).apiKeyPrefix).toBe(prefix);
  });

  it('trims the prefix', () => {
    expect(loadConfig({ API_KEY_PREFIX: ' acme ' }).apiKeyPrefix).toBe('acme');
  });

  it.each([
    ['a', 'a'],
    ['Cnt', 'Cnt'],
    ['CNT', 'CNT'],
    ['1ab', '1ab'],
    ['c_t', 'c_t'],
    ['c-t', 'c-t'],
    ['cnt_live', 'cnt_live'],
    ['abcdefghijklmnopq', 'abcdefghijklmnopq'],
    [' a b ', 'a b'],
  ])('refuses %j with a ConfigError naming API_KEY_PREFIX', (text, shown) => {
    expect(configError({ API_KEY_PREFIX: text }).message).toBe(
      `API_KEY_PREFIX must be 2–16 lowercase letters or digits starting with a letter; got "${shown}"`,
    );
  });
});

describe('loadConfig LOG_LEVEL', () => {
  it.each(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'])('accepts %j', (level) => {
    expect(loadConfig({ LOG_LEVEL: level }).logLevel).toBe(level);
  });

  it('trims the level', () => {
    expect(loadConfig({ LOG_LEVEL: ' debug ' }).logLevel).toBe('debug');
  });

  it.each(['verbose', 'warning', 'INFO', 'Debug', 'all', '10'])(
    'refuses %j with a ConfigError naming LOG_LEVEL and listing the levels',
    (level) => {
      expect(configError({ LOG_LEVEL: level }).message).toBe(
        `LOG_LEVEL must be one of fatal, error, warn, info, debug, trace, silent; got "${level}"`,
      );
    },
  );
});

describe('loadConfig DATABASE_URL', () => {
  it('gives SQLite at the resolved ./data/contacts.db when unset, empty or blank', () => {
    const expected = { kind: 'sqlite', path: resolve('./data/contacts.db') };
    expect(loadConfig({}).database).toStrictEqual(expected);
    expect(loadConfig({ DATABASE_URL: '' }).database).toStrictEqual(expected);
    expect(loadConfig({ DATABASE_URL: '   ' }).database).toStrictEqual(expected);
  });

  it('resolves a relative file: path against the working directory', () => {
    expect(loadConfig({ DATABASE_URL: 'file:./tmp/test.db' }).database).toStrictEqual({
      kind: 'sqlite',
      path: resolve('./tmp/test.db'),
    });
    expect(loadConfig({ DATABASE_URL: 'file:test.db' }).database).toStrictEqual({
      kind: 'sqlite',
      path: resolve('test.db'),
    });
  });

  it('keeps an absolute file:/path', () => {
    expect(loadConfig({ DATABASE_URL: 'file:/var/lib/contacts.db' }).database).toStrictEqual({
      kind: 'sqlite',
      path: '/var/lib/contacts.db',
    });
  });

  it('reads file:///path as the absolute path', () => {
    expect(loadConfig({ DATABASE_URL: 'file:///var/lib/contacts.db' }).database).toStrictEqual({
      kind: 'sqlite',
      path: '/var/lib/contacts.db',
    });
  });

  it('keeps file::memory: as an in-memory SQLite database', () => {
    expect(loadConfig({ DATABASE_URL: 'file::memory:' }).database).toStrictEqual({ kind: 'sqlite', path: ':memory:' });
  });

  it('refuses file: without a path, naming DATABASE_URL', () => {
    expect(configError({ DATABASE_URL: 'file:' }).message).toBe('DATABASE_URL "file:" needs a path, e.g. file:./data/contacts.db');
  });

  it.each([
    'postgres://user:secret@db.example.com:5432/contacts',
    'postgresql://user:secret@db.example.com:5432/contacts?sslmode=require',
    'postgres://localhost/contacts',
    'postgresql:///contacts?host=/var/run/postgresql',
  ])('gives PostgreSQL with the URL unchanged for %s', (url) => {
    expect(loadConfig({ DATABASE_URL: url }).database).toStrictEqual({ kind: 'postgres', url });
  });

  it.each([
    'mysql://user@localhost/contacts',
    'sqlite:./data/contacts.db',
    'sqlite:///data/contacts.db',
    'postgres:/localhost/contacts',
    'postgres:localhost',
    'POSTGRES://localhost/contacts',
    'http://localhost/contacts',
    './data/contacts.db',
    '/var/lib/contacts.db',
    ' file:./x.db',
  ])('refuses %j with a ConfigError naming DATABASE_URL', (url) => {
    expect(configError({ DATABASE_URL: url }).message).toBe('DATABASE_URL must be file:PATH, postgres://… or postgresql://…');
  });

  it('does not echo the refused URL, which may hold a password', () => {
    expect(configError({ DATABASE_URL: 'mysql://root:hunter2@db/contacts' }).message).not.toContain('hunter2');
  });
});

describe('loadConfig error order', () => {
  it('reports DATABASE_URL first when several variables are wrong', () => {
    expect(configError({ DATABASE_URL: 'mysql://x', PORT: 'x', LOG_LEVEL: 'x' }).message).toMatch(/^DATABASE_URL /);
  });

  it('reports PORT before API_KEY_PREFIX and LOG_LEVEL', () => {
    expect(configError({ PORT: 'x', API_KEY_PREFIX: 'X', LOG_LEVEL: 'x' }).message).toMatch(/^PORT /);
  });

  it('reports API_KEY_PREFIX before LOG_LEVEL', () => {
    expect(configError({ API_KEY_PREFIX: 'X', LOG_LEVEL: 'x' }).message).toMatch(/^API_KEY_PREFIX /);
  });
});

describe('ConfigError', () => {
  it('is an Error named ConfigError', () => {
    const error = new ConfigError('x');
    expect(error).toBeInstanceOf(Error);
    expect(error.name).toBe('ConfigError');
  });
});

describe('loadConfig OAuth and links', () => {
  it('takes the issuer from OAUTH_ISSUER, or the URL the server listens at, from HOST and PORT or from serve’s options', () => {
    expect(loadConfig({ OAUTH_ISSUER: 'https://contacts.example.com', PORT: '8080' }).oauth.issuer).toBe('https://contacts.example.com');
    expect(loadConfig({ OAUTH_ISSUER: 'https://contacts.example.com' }, { port: 8080 }).oauth.issuer).toBe('https://contacts.example.com');
    expect(loadConfig({}).oauth.issuer).toBe('http://127.0.0.1:3000');
    expect(loadConfig({ PORT: '8080' }).oauth.issuer).toBe('http://127.0.0.1:8080');
    expect(loadConfig({ PORT: '8080', HOST: 'contacts.internal' }).oauth.issuer).toBe('http://contacts.internal:8080');
    expect(loadConfig({ PORT: '8080', HOST: 'contacts.internal' }, { port: 41010 }).oauth.issuer).toBe('http://contacts.internal:41010');
    expect(loadConfig({ PORT: '8080' }, { host: '::', port: 41010 }).oauth.issuer).toBe('http://[::1]:41010');
    expect(loadConfig({}, { host: '0.0.0.0' }).oauth.issuer).toBe('http://127.0.0.1:3000');
    expect(loadConfig({}, { host: '::1' }).oauth.issuer).toBe('http://[::1]:3000');
  });

  it.each([
    'contacts.example.com',
    'https://contacts.example.com/',
    'https://contacts.example.com/api',
    'ftp://x.example',
    'https://a.example?x=1',
  ])('refuses OAUTH_ISSUER %j: it must be the origin clients use', (issuer) => {
    expect(() => loadConfig({ OAUTH_ISSUER: issuer })).toThrow(/^OAUTH_ISSUER must be the public base URL clients use/);
  });

  it('reads an external issuer with its keys, audience and user claim; either alone is refused', () => {
    const { external } = loadConfig({
      OAUTH_ISSUER: 'https://contacts.example.com',
      OAUTH_EXTERNAL_ISSUER: 'https://auth.example.com',
      OAUTH_EXTERNAL_JWKS_URL: 'https://auth.example.com/jwks.json',
    }).oauth;
    expect(external).toEqual({
      issuer: 'https://auth.example.com',
      jwksUrl: 'https://auth.example.com/jwks.json',
      audience: 'https://contacts.example.com/mcp',
      userClaim: 'sub',
    });
    expect(() => loadConfig({ OAUTH_EXTERNAL_ISSUER: 'https://auth.example.com' })).toThrow(
      /OAUTH_EXTERNAL_JWKS_URL and OAUTH_EXTERNAL_ISSUER must be set together/,
    );
    expect(() => loadConfig({ OAUTH_EXTERNAL_ISSUER: 'http://auth.example.com', OAUTH_EXTERNAL_JWKS_URL: 'https://a/j' })).toThrow(
      /^OAUTH_EXTERNAL_ISSUER must be an https:\/\/ URL/,
    );
  });

  it('reads the consent page branding and refuses a colour that is not one', () => {
    const { consent } = loadConfig({
      OAUTH_PRODUCT_NAME: 'Acme CRM',
      OAUTH_ACCENT_COLOR: '#a1b2c3',
      OAUTH_LOGO_URL: 'https://cdn.acme.example/logo.svg',
    }).oauth;
    expect(consent).toEqual({
      productName: 'Acme CRM',
      accentColor: '#a1b2c3',
      logoUrl: 'https://cdn.acme.example/logo.svg',
      apiKeysUrl: null,
    });
    expect(() => loadConfig({ OAUTH_ACCENT_COLOR: 'red;}' })).toThrow(/^OAUTH_ACCENT_COLOR must be a colour/);
  });

  it('reads CONTACT_URL_TEMPLATE, which must be an http(s) URL with {id}', () => {
    expect(loadConfig({ CONTACT_URL_TEMPLATE: 'https://app.example.com/contacts/{id}' }).contactUrlTemplate).toBe(
      'https://app.example.com/contacts/{id}',
    );
    expect(() => loadConfig({ CONTACT_URL_TEMPLATE: 'https://app.example.com/contacts' })).toThrow(
      /^CONTACT_URL_TEMPLATE must be an http\(s\) URL containing \{id\}/,
    );
  });

  it('reads PUBLIC_URL, the OpenAPI servers entry: / by default, else an http(s) URL without query or trailing slash', () => {
    expect(loadConfig({}).openApi.publicUrl).toBe('/');
    expect(loadConfig({ PUBLIC_URL: ' https://api.acme.dev ' }).openApi.publicUrl).toBe('https://api.acme.dev');
    expect(loadConfig({ PUBLIC_URL: 'https://acme.dev/contacts-api' }).openApi.publicUrl).toBe('https://acme.dev/contacts-api');
    for (const bad of ['https://api.acme.dev/', 'ftp://acme.dev', 'api.acme.dev', 'https://acme.dev?x=1', 'https://acme.dev#top']) {
      expect(() => loadConfig({ PUBLIC_URL: bad }), bad).toThrow(/^PUBLIC_URL must be an http\(s\) URL without query or trailing slash/);
    }
  });

  it('reads API_CONTACT, an email address or an http(s) URL', () => {
    expect(loadConfig({}).openApi.contact).toBeNull();
    expect(loadConfig({ API_CONTACT: 'api@acme.dev' }).openApi.contact).toEqual({ email: 'api@acme.dev' });
    expect(loadConfig({ API_CONTACT: 'https://acme.dev/support' }).openApi.contact).toEqual({ url: 'https://acme.dev/support' });
    expect(() => loadConfig({ API_CONTACT: 'call us' })).toThrow(/^API_CONTACT must be an email address or an http\(s\) URL/);
  });

  it('reads DB_POOL_SIZE and DB_QUEUE_LIMIT: PostgreSQL connections per process and statements that may wait for one', () => {
    expect(loadConfig({}).dbPool).toEqual({ size: 3, queueLimit: 64 });
    expect(loadConfig({ DB_POOL_SIZE: '8', DB_QUEUE_LIMIT: '0' }).dbPool).toEqual({ size: 8, queueLimit: 0 });
    expect(() => loadConfig({ DB_POOL_SIZE: '0' })).toThrow(/^DB_POOL_SIZE /);
    expect(() => loadConfig({ DB_QUEUE_LIMIT: 'many' })).toThrow(/^DB_QUEUE_LIMIT /);
  });

  it('reads DB_POOLER: auto unless told none or transaction', () => {
    expect(loadConfig({}).dbPooler).toBe('auto');
    expect(loadConfig({ DB_POOLER: 'transaction' }).dbPooler).toBe('transaction');
    expect(loadConfig({ DB_POOLER: 'none' }).dbPooler).toBe('none');
    expect(() => loadConfig({ DB_POOLER: 'session' })).toThrow(/^DB_POOLER must be one of auto, none, transaction; got "session"/);
  });

  it('reads the admin API’s settings: ADMIN_TOKEN turns it on, on ADMIN_HOST:ADMIN_PORT, with ADMIN_BODY_LIMIT_MB and ADMIN_IMPORT_MAX_RECORDS', () => {
    const token = 'a'.repeat(31) + '!';
    const env = {
      ADMIN_TOKEN: token,
      ADMIN_HOST: ' 0.0.0.0 ',
      ADMIN_PORT: '4001',
      ADMIN_BODY_LIMIT_MB: '8',
      ADMIN_IMPORT_MAX_RECORDS: '1000',
    };
    expect(loadConfig(env).admin).toEqual({
      token,
      host: '0.0.0.0',
      port: 4001,
      bodyLimitMb: 8,
      importMaxRecords: 1000,
    });
    expect(() => loadConfig({ ADMIN_IMPORT_MAX_RECORDS: '0' })).toThrow(/^ADMIN_IMPORT_MAX_RECORDS must be an integer from 1/);
    expect(loadConfig({ ADMIN_TOKEN: '  ' }).admin.token).toBeNull();
    expect(() => loadConfig({ ADMIN_BODY_LIMIT_MB: '0' })).toThrow(/^ADMIN_BODY_LIMIT_MB must be an integer from 1 to 4096/);
    expect(() => loadConfig({ ADMIN_PORT: 'admin' })).toThrow(/^ADMIN_PORT must be a port number/);
  });

  it('stops at an ADMIN_TOKEN shorter than 32 characters, or with spaces, naming it and never echoing it', () => {
    for (const bad of ['s3cret-but-only-31-characters!!', `${'a'.repeat(20)} ${'b'.repeat(20)}`]) {
      const error = configError({ ADMIN_TOKEN: bad });
      expect(error.message).toMatch(/^ADMIN_TOKEN must be 32–1024 visible ASCII characters/);
      expect(error.message).not.toContain(bad);
    }
  });

  it('refuses the admin API on the public port, which a cluster’s workers would share between both', () => {
    const token = 'a'.repeat(32);
    expect(configError({ ADMIN_TOKEN: token, ADMIN_PORT: '3000' }).message).toBe('ADMIN_PORT must differ from the public port (3000)');
    expect(() => loadConfig({ ADMIN_TOKEN: token, ADMIN_PORT: '4000' }, { port: 4000 })).toThrow(/^ADMIN_PORT must differ/);
    expect(loadConfig({ ADMIN_TOKEN: token, ADMIN_PORT: '0' }, { port: 0 }).admin.port).toBe(0);
  });
});

describe('loadConfig webhooks', () => {
  it('reads the retry schedule, the attempt timeout and whether private URLs are allowed', () => {
    const env = { WEBHOOK_RETRY_SCHEDULE: '50ms,50ms', WEBHOOK_TIMEOUT_MS: '2000', WEBHOOKS_ALLOW_PRIVATE_URLS: 'true' };
    expect(loadConfig(env).webhooks).toEqual({ retrySchedule: [50, 50], timeoutMs: 2000, allowPrivateUrls: true });
  });

  it('stops at a bad value, naming the variable and the entry', () => {
    expect(configError({ WEBHOOK_RETRY_SCHEDULE: '5s,soon' }).message).toMatch(
      /^WEBHOOK_RETRY_SCHEDULE Retry 2 of the schedule: Invalid duration "soon"/,
    );
    expect(() => loadConfig({ WEBHOOK_TIMEOUT_MS: '10' })).toThrow(/^WEBHOOK_TIMEOUT_MS must be an integer from 100 to 3600000/);
    expect(() => loadConfig({ WEBHOOKS_ALLOW_PRIVATE_URLS: 'yes' })).toThrow(/^WEBHOOKS_ALLOW_PRIVATE_URLS must be true or false/);
  });
});
