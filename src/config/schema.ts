import { isIP } from 'node:net';
import Type, { type StaticDecode, type TString } from 'typebox';
import { KEY_PREFIX_PATTERN } from '../domain/api-key.js';
import { DEFAULT_WEBHOOK_RETRY_SCHEDULE, parseRetrySchedule } from '../domain/webhooks.js';
import {
  DEFAULT_POOL,
  DEFAULT_SQLITE_PATH,
  parseDatabaseUrl,
  POOLER_SETTINGS,
  type DatabaseTarget,
  type PoolerSetting,
} from '../domain/database-url.js';

export const DEFAULT_HOST = '127.0.0.1';
export const DEFAULT_AUTH_FAILURES_PER_MINUTE = 60;
export const DEFAULT_OAUTH_REGISTRATIONS_PER_MINUTE = 20;
export const DEFAULT_OAUTH_AUTHORIZATIONS_PER_MINUTE = 60;
export const DEFAULT_CHANGES_RETENTION_DAYS = 30;
const MAX_WORKERS = 64;
/** Changes made with the CLI must reach a running server within one second. */
const MAX_CACHE_TTL_MS = 900;
const HOUR_MS = 3_600_000;
/** An admin token must be long enough that guessing it is hopeless. */
const ADMIN_TOKEN_MIN_LENGTH = 32;
const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'];
const NAMED_PROXY_RANGES = ['loopback', 'linklocal', 'uniquelocal'];

/*
 * How a variable's text becomes its value (src/config/read-environment.ts): an integer is base-10 digits (a port at
 * most five); a boolean is true or false in any case; a string is trimmed unless `verbatim`; a Decode turns the
 * checked string into what the config holds. An unset or blank variable takes its `default`, or stays unset.
 */
const integer = (minimum: number, maximum: number, description: string, fallback?: number) =>
  Type.Integer({ minimum, maximum, description, default: fallback });
const port = (description: string, fallback?: number) =>
  Type.Integer({ minimum: 0, maximum: 65535, format: 'port', description, default: fallback });
const boolean = (description: string) => Type.Boolean({ description, default: false });
const text = (description: string, fallback?: string) => Type.String({ description, default: fallback });
const checked = <Schema extends TString>(schema: Schema, check: (value: string) => boolean, error: (value: string) => string) =>
  Type.Refine(schema, check, error);
const isHttpUrl = (value: string) => URL.canParse(value) && ['http:', 'https:'].includes(new URL(value).protocol);
const httpsUrl = (description: string) =>
  checked(
    text(description),
    (url) => URL.canParse(url) && new URL(url).protocol === 'https:',
    (url) => `must be an https:// URL; got "${url}"`,
  );
const commaSeparated = (value: string) => value.split(',').map((entry) => entry.trim());
const secret = (description: string, pattern: RegExp, error: string) =>
  checked(
    Type.String({ description, verbatim: true }),
    (value) => pattern.test(value),
    () => error,
  );

/** Every environment variable the configuration reads, in the order they are checked. */
export const ENVIRONMENT = Type.Object({
  DATABASE_URL: Type.Decode(
    Type.String({ description: '`file:PATH` for SQLite, or `postgres://…`', default: `file:${DEFAULT_SQLITE_PATH}`, verbatim: true }),
    (url): DatabaseTarget => Object.freeze(parseDatabaseUrl(url)),
  ),
  HOST: text('the address `serve` listens on', DEFAULT_HOST),
  PORT: port('the port `serve` listens on', 3000),
  DATABASE_READ_URL: Type.Optional(
    Type.Decode(
      checked(
        Type.String({ description: 'a PostgreSQL streaming replica serving contact reads', verbatim: true }),
        (url) => /^postgres(ql)?:\/\//.test(url),
        () => 'must be a postgres:// or postgresql:// URL',
      ),
      (url): DatabaseTarget => Object.freeze({ kind: 'postgres', url }),
    ),
  ),
  API_KEY_PREFIX: checked(
    text('keys look like `<prefix>_live_<secret>`', 'cnt'),
    (prefix) => KEY_PREFIX_PATTERN.test(prefix),
    (prefix) => `must be 2–16 lowercase letters or digits starting with a letter; got "${prefix}"`,
  ),
  LOG_LEVEL: checked(
    text(`one of ${LOG_LEVELS.join(', ')}`, 'info'),
    (level) => LOG_LEVELS.includes(level),
    (level) => `must be one of ${LOG_LEVELS.join(', ')}; got "${level}"`,
  ),
  RATE_LIMIT_PER_MINUTE: integer(0, 1_000_000, 'requests per API key per minute; 0 turns rate limiting off', 600),
  AUTH_FAILURES_PER_MINUTE: integer(
    0,
    1_000_000,
    'failed authentications per client address per minute across REST, /mcp, CardDAV and the consent page; 0 = off',
    DEFAULT_AUTH_FAILURES_PER_MINUTE,
  ),
  REDIS_URL: Type.Optional(
    checked(
      text('redis:// or rediss:// URL of the counts shared by every instance; unset counts in memory'),
      // The value is not echoed: it may carry a password.
      (url) => /^rediss?:\/\//.test(url) && URL.canParse(url),
      () => 'must be a redis:// or rediss:// URL',
    ),
  ),
  RATE_LIMIT_REDIS_PREFIX: checked(
    text('prefix of the Redis keys, so deployments can share a Redis', 'contacts-api:rate-limit:'),
    (prefix) => /^[A-Za-z0-9:._-]{1,64}$/.test(prefix),
    (prefix) => `must be 1–64 letters, digits or ":._-"; got "${prefix}"`,
  ),
  OAUTH_REGISTRATIONS_PER_MINUTE: integer(
    0,
    1_000_000,
    'OAuth client registrations per client address per minute; 0 = off',
    DEFAULT_OAUTH_REGISTRATIONS_PER_MINUTE,
  ),
  OAUTH_AUTHORIZATIONS_PER_MINUTE: integer(
    0,
    1_000_000,
    'OAuth authorization requests (/oauth/authorize, /oauth/par) per client address per minute; 0 = off',
    DEFAULT_OAUTH_AUTHORIZATIONS_PER_MINUTE,
  ),
  METRICS_PORT: Type.Optional(port('a port of its own for GET /metrics')),
  // The value is not echoed: it is a secret.
  METRICS_TOKEN: Type.Optional(
    secret(
      'a bearer token that unlocks GET /metrics on the API port',
      /^[\x21-\x7e]{16,256}$/,
      'must be 16–256 visible ASCII characters, no spaces',
    ),
  ),
  METRICS_HOST: text('the address METRICS_PORT listens on', DEFAULT_HOST),
  WORKERS: Type.Optional(integer(1, MAX_WORKERS, 'server processes sharing the port; unset means one per core')),
  WORKER_HEAP_MB: integer(64, 65_536, "V8's old-space limit in each worker of `serve --workers`", 128),
  KEY_CACHE_TTL_MS: integer(0, MAX_CACHE_TTL_MS, 'how long a key lookup is reused; 0 looks every key up on every request', 500),
  LISTING_CACHE_TTL_MS: integer(0, MAX_CACHE_TTL_MS, "how long an owner's contact count and listing version are reused", 250),
  PAGE_CACHE_MB: integer(1, 65_536, 'MiB of listing pages each process keeps as documents, for pages read again', 4),
  COMPRESSED_PAGE_CACHE_MB: integer(1, 65_536, 'MiB of listing pages each process keeps compressed, to send them without a read', 32),
  PLAIN_PAGE_CACHE_MB: integer(1, 65_536, 'MiB of hot listing pages each process keeps as they are, for clients that take no coding', 4),
  CHANGES_RETENTION_DAYS: integer(1, 3650, 'how long the change feed keeps changes', DEFAULT_CHANGES_RETENTION_DAYS),
  REQUEST_TIMEOUT_MS: integer(1, HOUR_MS, 'a request not answered by then gets 503; its headers must arrive within it (408)', 10_000),
  BODY_READ_TIMEOUT_MS: integer(100, HOUR_MS, 'a body stalled this long, or slower than 64 KiB/s after it, gets 408', 30_000),
  // 2 MB holds one whole batch (a 1 MiB response and the answer being built), so every request can run when alone.
  MCP_INFLIGHT_MB: integer(2, 65_536, 'the answers of /mcp requests one process may be building and holding at once', 8),
  MAX_INFLIGHT_REQUESTS: integer(1, 1_000_000, 'HTTP requests one process may have begun and not finished; past it 503', 256),
  WRITE_STALL_TIMEOUT_MS: integer(100, HOUR_MS, 'a connection whose client takes no answer bytes for this long is closed', 10_000),
  WRITE_BACKLOG_MAX_KB: integer(16, 1_048_576, 'answers a connection may have waiting behind the one being written', 1024),
  DB_STATEMENT_TIMEOUT_MS: integer(1, HOUR_MS, 'PostgreSQL statement_timeout, SQLite busy_timeout, for the server', 5_000),
  DB_POOL_SIZE: integer(1, 1000, 'PostgreSQL connections per process', DEFAULT_POOL.size),
  DB_QUEUE_LIMIT: integer(0, 100_000, 'statements that may wait for a PostgreSQL connection', DEFAULT_POOL.queueLimit),
  DB_POOLER: Type.Decode(
    checked(
      text(`what sits between this service and PostgreSQL: ${POOLER_SETTINGS.join(', ')}`, 'auto'),
      (setting) => (POOLER_SETTINGS as readonly string[]).includes(setting),
      (setting) => `must be one of ${POOLER_SETTINGS.join(', ')}; got "${setting}"`,
    ),
    (setting) => setting as PoolerSetting,
  ),
  SHUTDOWN_TIMEOUT_MS: integer(1, HOUR_MS, 'on SIGTERM/SIGINT, in-flight requests get this long before exit(1)', 10_000),
  TRUST_PROXY: Type.Decode(
    checked(text('true, false, or the proxies’ addresses and CIDR ranges', 'false'), isTrustProxy, trustProxyError),
    (value): boolean | readonly string[] => {
      const lowered = value.toLowerCase();
      return lowered === 'true' || lowered === 'false' ? lowered === 'true' : Object.freeze(commaSeparated(lowered));
    },
  ),
  CORS_ORIGINS: Type.Decode(
    checked(
      text('comma-separated origins allowed to call the API from a browser', ''),
      (origins) => origins.split(',').every((origin) => isOrigin(origin.trim())),
      (origins) =>
        `must list origins exactly as browsers send them (https://app.example.com, no path or trailing slash); got "${
          origins
            .split(',')
            .map((origin) => origin.trim())
            .find((origin) => !isOrigin(origin)) ?? ''
        }"`,
    ),
    (origins): readonly string[] => Object.freeze(commaSeparated(origins).filter((origin) => origin !== '')),
  ),
  HSTS_MAX_AGE: Type.Optional(integer(0, 1_000_000_000, 'send Strict-Transport-Security with this max-age in seconds')),
  OAUTH_ISSUER: Type.Optional(
    checked(
      text('the public base URL clients reach this service at, the OAuth issuer; unset, the URL `serve` listens at'),
      isOrigin,
      (url) => `must be the public base URL clients use, like https://contacts.example.com (no trailing slash); got "${url}"`,
    ),
  ),
  OAUTH_EXTERNAL_ISSUER: Type.Optional(httpsUrl('the `iss` of another authorization server whose JWTs /mcp accepts')),
  OAUTH_EXTERNAL_JWKS_URL: Type.Optional(httpsUrl("where OAUTH_EXTERNAL_ISSUER's signing keys are")),
  OAUTH_EXTERNAL_AUDIENCE: Type.Optional(text("the `aud` the external issuer's tokens must carry; unset, `<OAUTH_ISSUER>/mcp`")),
  OAUTH_EXTERNAL_USER_CLAIM: text("the external token's claim holding the user's id (or email) in this service", 'sub'),
  OAUTH_PRODUCT_NAME: checked(
    text('the product name on the consent page', 'Contacts'),
    (name) => name.length <= 60,
    () => 'must be at most 60 characters',
  ),
  OAUTH_ACCENT_COLOR: checked(
    text("the consent page's buttons and links, a `#rgb` or `#rrggbb` colour", '#2f5bd3'),
    (color) => /^#(?:[0-9a-f]{3}|[0-9a-f]{6})$/i.test(color),
    (color) => `must be a colour like #2f5bd3; got "${color}"`,
  ),
  OAUTH_LOGO_URL: Type.Optional(httpsUrl('an https image shown above the consent form')),
  OAUTH_API_KEYS_URL: Type.Optional(httpsUrl('where a user makes an API key, linked from the consent form')),
  OAUTH_CLIENT_METADATA_ALLOW_PRIVATE: boolean('client metadata documents may be fetched from private addresses (tests only)'),
  CONTACT_URL_TEMPLATE: Type.Optional(
    checked(
      text('the link the MCP tools give each contact, `{id}` replaced'),
      (template) => template.includes('{id}') && isHttpUrl(template.replaceAll('{id}', '00000000-0000-4000-8000-000000000000')),
      (template) => `must be an http(s) URL containing {id}, like https://app.example.com/contacts/{id}; got "${template}"`,
    ),
  ),
  PUBLIC_URL: checked(
    text("the base URL clients reach the API at, the OpenAPI document's servers entry", '/'),
    (url) => url === '/' || (isHttpUrl(url) && new URL(url).search === '' && new URL(url).hash === '' && !url.endsWith('/')),
    (url) => `must be an http(s) URL without query or trailing slash, like https://api.example.com, or /; got "${url}"`,
  ),
  API_CONTACT: Type.Optional(
    Type.Decode(
      checked(
        text("whom integrators ask, an email address or an http(s) URL: the OpenAPI document's info.contact"),
        (contact) => isEmail(contact) || isHttpUrl(contact),
        (contact) => `must be an email address or an http(s) URL; got "${contact}"`,
      ),
      (contact): { readonly email: string } | { readonly url: string } =>
        Object.freeze(isEmail(contact) ? { email: contact } : { url: contact }),
    ),
  ),
  // The value is not echoed: it is a secret.
  ADMIN_TOKEN: Type.Optional(
    secret(
      'the Bearer token of every admin request; unset turns the admin API off',
      new RegExp(`^[\\x21-\\x7e]{${ADMIN_TOKEN_MIN_LENGTH},1024}$`),
      `must be ${ADMIN_TOKEN_MIN_LENGTH}–1024 visible ASCII characters, no spaces`,
    ),
  ),
  ADMIN_PORT: port("the admin API's own port, never the public one", 3001),
  ADMIN_HOST: text('the address the admin API listens on', DEFAULT_HOST),
  ADMIN_BODY_LIMIT_MB: integer(1, 4096, 'the largest body of a contacts import, streamed', 64),
  ADMIN_IMPORT_MAX_RECORDS: integer(1, 1_000_000_000, 'the most records one contacts import takes', 500_000),
  WEBHOOK_RETRY_SCHEDULE: Type.Decode(
    text('the waits before each retry of a failed delivery, each jittered by ±20 %', DEFAULT_WEBHOOK_RETRY_SCHEDULE),
    (schedule): readonly number[] => Object.freeze(parseRetrySchedule(schedule)),
  ),
  WEBHOOK_TIMEOUT_MS: integer(100, HOUR_MS, 'one whole webhook attempt, connection to the response’s end', 15_000),
  WEBHOOKS_ALLOW_PRIVATE_URLS: boolean('webhook endpoints may be plain http and on private addresses (tests only)'),
});

export type Environment = StaticDecode<typeof ENVIRONMENT>;

function isOrigin(origin: string): boolean {
  if (origin === '') return true;
  const url = URL.canParse(origin) ? new URL(origin) : null;
  return url !== null && ['http:', 'https:'].includes(url.protocol) && url.origin === origin;
}

function isEmail(text: string): boolean {
  return /^[^\s@]+@[^\s@]+\.[^\s@]+$/.test(text);
}

function isTrustProxy(value: string): boolean {
  return trustProxyProblem(value.toLowerCase()) === null;
}

function trustProxyError(value: string): string {
  return trustProxyProblem(value.toLowerCase()) ?? '';
}

/** What is wrong with a TRUST_PROXY value, or null. */
function trustProxyProblem(value: string): string | null {
  if (value === 'true' || value === 'false') return null;
  if (/^\d+$/.test(value)) {
    // Fastify ≥ 5.12 trusts no one for a bare hop count, since it can't tell a proxy from a direct client.
    return `takes the proxies' addresses or CIDR ranges, not a hop count ("${value}"): a count can't tell a proxy from a client that connects directly`;
  }
  for (const entry of commaSeparated(value)) {
    if (/^::ffff:[\d.]+\/\d+$/.test(entry) && Number(entry.split('/')[1]) < 96) {
      // An IPv4-sized prefix on an IPv4-mapped address would trust every IPv4 client (CVE-2026-92395).
      return `"${entry}": an IPv4-mapped range needs a prefix of 96 or more (::ffff:10.0.0.0/104), or write it as IPv4`;
    }
    if (!NAMED_PROXY_RANGES.includes(entry) && !isAddressOrRange(entry)) {
      return `must be true, false, or comma-separated IP addresses, CIDR ranges or ${NAMED_PROXY_RANGES.join('/')}; got "${entry}"`;
    }
  }
  return null;
}

function isAddressOrRange(entry: string): boolean {
  const [address = '', bits, ...rest] = entry.split('/');
  const version = isIP(address);
  if (version === 0 || rest.length > 0) return false;
  return bits === undefined || (/^\d{1,3}$/.test(bits) && Number(bits) <= (version === 4 ? 32 : 128));
}
