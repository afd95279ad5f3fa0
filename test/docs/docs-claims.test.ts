import { readdirSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { isDeepStrictEqual } from 'node:util';
import { describe, expect, it } from 'vitest';
import { createProgram } from '../../src/cli/program.js';
import { loadConfig, type Config } from '../../src/config.js';
import { DEFAULT_WEBHOOK_RETRY_SCHEDULE, parseRetrySchedule } from '../../src/domain/webhooks.js';

const ROOT = resolve(import.meta.dirname, '../..');
const DOCS = [
  'README.md',
  'packages/client/README.md',
  'src/store/README.md',
  ...readdirSync(join(ROOT, 'docs'))
    .filter((name) => name.endsWith('.md'))
    .map((name) => `docs/${name}`),
];
const MIB = 1024 * 1024;
const read = (path: string) => readFileSync(join(ROOT, path), 'utf8');

/** What an empty environment gives each variable of docs/configuration.md's table, as the table spells it. */
const PARSED_DEFAULTS: Record<string, (config: Config) => unknown> = {
  DATABASE_URL: (config) => (config.database.kind === 'sqlite' ? config.database.path : config.database.url),
  DATABASE_READ_URL: (config) => config.databaseRead,
  HOST: (config) => config.host,
  PORT: (config) => config.port,
  API_KEY_PREFIX: (config) => config.apiKeyPrefix,
  LOG_LEVEL: (config) => config.logLevel,
  RATE_LIMIT_PER_MINUTE: (config) => config.rateLimit.perMinute,
  MCP_INFLIGHT_MB: (config) => config.mcpInflightMb,
  MAX_INFLIGHT_REQUESTS: (config) => config.maxInflightRequests,
  WRITE_STALL_TIMEOUT_MS: (config) => config.writeStallTimeoutMs,
  WRITE_BACKLOG_MAX_KB: (config) => config.writeBacklogMaxKb,
  AUTH_FAILURES_PER_MINUTE: (config) => config.rateLimit.authFailuresPerMinute,
  OAUTH_REGISTRATIONS_PER_MINUTE: (config) => config.rateLimit.oauthRegistrationsPerMinute,
  OAUTH_AUTHORIZATIONS_PER_MINUTE: (config) => config.rateLimit.oauthAuthorizationsPerMinute,
  REDIS_URL: (config) => config.rateLimit.redisUrl,
  RATE_LIMIT_REDIS_PREFIX: (config) => config.rateLimit.redisPrefix,
  METRICS_PORT: (config) => config.metrics.port,
  METRICS_HOST: (config) => config.metrics.host,
  METRICS_TOKEN: (config) => config.metrics.token,
  ADMIN_TOKEN: (config) => config.admin.token,
  ADMIN_HOST: (config) => config.admin.host,
  ADMIN_PORT: (config) => config.admin.port,
  ADMIN_BODY_LIMIT_MB: (config) => config.admin.bodyLimitMb,
  ADMIN_IMPORT_MAX_RECORDS: (config) => config.admin.importMaxRecords,
  WORKERS: (config) => config.workers,
  WORKER_HEAP_MB: (config) => config.workerHeapMb,
  REQUEST_TIMEOUT_MS: (config) => config.requestTimeoutMs,
  BODY_READ_TIMEOUT_MS: (config) => config.bodyReadTimeoutMs,
  KEY_CACHE_TTL_MS: (config) => config.keyCacheTtlMs,
  LISTING_CACHE_TTL_MS: (config) => config.listingCacheTtlMs,
  PAGE_CACHE_MB: (config) => config.pageCaches.documentBytes / MIB,
  COMPRESSED_PAGE_CACHE_MB: (config) => config.pageCaches.compressedBytes / MIB,
  PLAIN_PAGE_CACHE_MB: (config) => config.pageCaches.plainBytes / MIB,
  CHANGES_RETENTION_DAYS: (config) => config.changesRetentionDays,
  // The table spells the schedule as the variable takes it; the config holds the waits it parses to.
  WEBHOOK_RETRY_SCHEDULE: (config) =>
    isDeepStrictEqual(config.webhooks.retrySchedule, parseRetrySchedule(DEFAULT_WEBHOOK_RETRY_SCHEDULE))
      ? DEFAULT_WEBHOOK_RETRY_SCHEDULE
      : config.webhooks.retrySchedule,
  WEBHOOK_TIMEOUT_MS: (config) => config.webhooks.timeoutMs,
  WEBHOOKS_ALLOW_PRIVATE_URLS: (config) => config.webhooks.allowPrivateUrls,
  DB_STATEMENT_TIMEOUT_MS: (config) => config.dbStatementTimeoutMs,
  DB_POOL_SIZE: (config) => config.dbPool.size,
  DB_QUEUE_LIMIT: (config) => config.dbPool.queueLimit,
  DB_POOLER: (config) => config.dbPooler,
  SHUTDOWN_TIMEOUT_MS: (config) => config.shutdownTimeoutMs,
  TRUST_PROXY: (config) => config.trustProxy,
  CORS_ORIGINS: (config) => (config.corsOrigins.length === 0 ? null : config.corsOrigins),
  HSTS_MAX_AGE: (config) => config.hstsMaxAgeSeconds,
  OAUTH_ISSUER: (config) => config.oauth.issuer,
  OAUTH_PRODUCT_NAME: (config) => config.oauth.consent.productName,
  OAUTH_ACCENT_COLOR: (config) => config.oauth.consent.accentColor,
  OAUTH_LOGO_URL: (config) => config.oauth.consent.logoUrl,
  OAUTH_API_KEYS_URL: (config) => config.oauth.consent.apiKeysUrl,
  OAUTH_EXTERNAL_ISSUER: (config) => config.oauth.external,
  OAUTH_EXTERNAL_JWKS_URL: (config) => config.oauth.external,
  OAUTH_EXTERNAL_AUDIENCE: (config) => config.oauth.external,
  OAUTH_EXTERNAL_USER_CLAIM: (config) => config.oauth.external,
  OAUTH_CLIENT_METADATA_ALLOW_PRIVATE: (config) => config.oauth.clientMetadataAllowPrivate,
  PUBLIC_URL: (config) => config.openApi.publicUrl,
  API_CONTACT: (config) => config.openApi.contact,
  CONTACT_URL_TEMPLATE: (config) => config.contactUrlTemplate,
};

/**
 * A default cell's value for one variable: a literal (`3`), the literal a file path or URL pattern stands for
 * (`unset → SQLite at ./data/contacts.db` is that path; `http://localhost:PORT` has the port filled in), or null for
 * unset, none or a default said in words.
 */
function documentedDefault(cell: string, config: Config): unknown {
  if (/^(unset|none|one per core)\b/.test(cell)) {
    const path = /^unset → SQLite at `([^`]+)`/.exec(cell)?.[1];
    return path === undefined ? null : resolve(path);
  }
  const literal = /^`([^`]*)`$/.exec(cell)?.[1];
  if (literal === undefined) throw new Error(`a default that is neither a literal nor unset: ${cell}`);
  if (/^\d+$/.test(literal)) return Number(literal);
  if (literal === 'true' || literal === 'false') return literal === 'true';
  return literal.replace(/\bHOST\b/, config.host).replace(/\bPORT\b/, String(config.port));
}

/** The variables and default cells of the table, a row naming several variables split into one pair each. */
function configurationTable(): [string, string][] {
  const rows = read('docs/configuration.md')
    .split('\n')
    .filter((line) => /^\| `[A-Z_]+`/.test(line));
  return rows.flatMap((row) => {
    const [names = '', defaults = ''] = row.split(' | ').map((cell) => cell.replace(/^\| /, '').trim());
    const variables = names.split(', ').map((name) => name.replaceAll('`', ''));
    const values = variables.length === 1 || defaults === 'unset' ? variables.map(() => defaults) : defaults.split(', ');
    expect(values, `one default per variable in the row of ${names}`).toHaveLength(variables.length);
    return variables.map((variable, index): [string, string] => [variable, values[index]!]);
  });
}

describe('the docs say what the code does', () => {
  it('docs/configuration.md: every default in the table is what an empty environment gives', () => {
    const config = loadConfig({});
    const table = configurationTable();
    expect(table.map(([variable]) => variable).sort()).toEqual(Object.keys(PARSED_DEFAULTS).sort());
    for (const [variable, cell] of table) {
      const parsed = PARSED_DEFAULTS[variable]!(config);
      expect(parsed, `${variable}: the table says ${cell}`).toEqual(documentedDefault(cell, config));
    }
  });

  it('no doc puts a number on the connection pool other than DB_POOL_SIZE’s default', () => {
    const size = loadConfig({}).dbPool.size;
    for (const path of DOCS) {
      for (const [claim, count] of read(path).matchAll(/pool[^.|]{0,40}?\b(\d+) connections/gi)) {
        expect(Number(count), `${path}: “${claim}”`).toBe(size);
      }
    }
  });

  it('no doc names a command of the CLI after its old name contacts-api (it is contacts-read-api)', () => {
    const io = { stdout: () => {}, stderr: () => {}, env: {} };
    const commands = new Set(createProgram(io).commands.map((command) => command.name()));
    expect(commands).toContain('mcp');
    for (const path of DOCS) {
      for (const [usage, word] of read(path).matchAll(/\bcontacts-api (\S+)/g)) {
        expect(commands.has(word!.replace(/\W+$/, '')), `${path}: “${usage}”`).toBe(false);
      }
    }
  });

  it('no doc shows a space around a JSON colon: both databases send compact JSON (since PostgreSQL migration 8)', () => {
    for (const path of DOCS) expect(read(path), path).not.toMatch(/"\s+:\s+["{[\d]|space around each colon/);
  });

  it('the client is installed from this repository or its packed tarball, not by name from the registry', () => {
    for (const path of ['docs/client.md', 'packages/client/README.md']) {
      expect(read(path), path).not.toMatch(/npm install contacts-read-api-client\b/);
      expect(read(path), path).toMatch(/npm install \.\/contacts-read-api-client-\d+\.\d+\.\d+\.tgz/);
    }
  });

  it('docs/sync.md does not credit the public API with imports or merges: they come from the CLI', () => {
    expect(read('docs/sync.md')).not.toMatch(/the API's imports and merges/);
  });

  it('CI runs the README’s test command, and that command runs the suites on Node 24 too', () => {
    expect(read('README.md')).toMatch(/^npm test\s+#.*Node 24/m);
    expect(read('.ci/run').trim().split('\n').at(-1)).toBe('npm test');
    const { scripts } = JSON.parse(read('package.json')) as { scripts: Record<string, string> };
    expect(scripts.test).toMatch(/&& npm run test:node24$/);
    expect(scripts['test:node24']).toBe('bash scripts/test-node24.sh');
  });
});
