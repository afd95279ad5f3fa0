import { isIP } from 'node:net';
import { KEY_PREFIX_PATTERN } from './domain/api-key.js';
import { DEFAULT_WEBHOOK_RETRY_SCHEDULE, parseRetrySchedule } from './domain/webhooks.js';
import { parseBoolean, parseOAuthConfig, type OAuthConfig } from './oauth/oauth-config.js';
import { parseDatabaseUrl, type DatabaseTarget } from './store/open-store.js';
import { DEFAULT_POOL } from './store/store.js';

/** Settings read once from the environment at start-up. */
export interface Config {
  /** DATABASE_URL: unset → SQLite at ./data/contacts.db; `file:PATH`; `postgres://…`. */
  readonly database: DatabaseTarget;
  /**
   * DATABASE_READ_URL: a PostgreSQL streaming replica that serves contact reads (list, get, search), or null.
   * Keys, users and writes stay on DATABASE_URL, which must then be PostgreSQL too.
   */
  readonly databaseRead: DatabaseTarget | null;
  /** HOST (default 127.0.0.1). */
  readonly host: string;
  /** PORT (default 3000). */
  readonly port: number;
  /** API_KEY_PREFIX (default `cnt`): keys look like `<prefix>_live_<secret>`. */
  readonly apiKeyPrefix: string;
  /** LOG_LEVEL (default info): fatal, error, warn, info, debug, trace or silent. */
  readonly logLevel: string;
  /**
   * Rate limits: RATE_LIMIT_PER_MINUTE, AUTH_FAILURES_PER_MINUTE, OAUTH_REGISTRATIONS_PER_MINUTE,
   * OAUTH_AUTHORIZATIONS_PER_MINUTE, REDIS_URL, RATE_LIMIT_REDIS_PREFIX.
   */
  readonly rateLimit: RateLimitConfig;
  /** Where GET /metrics is served: METRICS_PORT and METRICS_HOST, or METRICS_TOKEN; neither → not served. */
  readonly metrics: MetricsConfig;
  /** WORKERS: server processes sharing the port; null (unset) means one per core. */
  readonly workers: number | null;
  /**
   * WORKER_HEAP_MB (default 128): V8's old-space limit in each worker of `serve --workers`. V8 lets a heap grow to
   * several times its live data before collecting; the caches are bounded far below this, so the limit keeps a
   * worker's memory near what it uses.
   */
  readonly workerHeapMb: number;
  /**
   * REQUEST_TIMEOUT_MS (default 10000): a request not answered by then gets 503, not counting the time its body takes to
   * arrive; its headers must arrive within it too (else 408).
   */
  readonly requestTimeoutMs: number;
  /**
   * BODY_READ_TIMEOUT_MS (default 30000): a request body from which no byte arrives for this long, or that falls behind
   * 64 KiB/s once it has taken this long, gets 408 and its connection is closed (src/http/body-read-timeout.ts).
   */
  readonly bodyReadTimeoutMs: number;
  /**
   * MCP_INFLIGHT_MB (default 8, 2 or more): the answers of /mcp requests one process may be building and holding at
   * once, estimated before each request runs (docs/mcp-limits.md); a request that would go past it gets 503 with
   * Retry-After. It bounds the heap that MCP batches take under a flood, with or without a rate limit.
   */
  readonly mcpInflightMb: number;
  /**
   * MAX_INFLIGHT_REQUESTS (default 256): the HTTP requests one process may have begun and not finished, answers
   * waiting behind a client that does not read included; past it a request gets 503 with Retry-After before any
   * database work (/healthz and /readyz excepted). It bounds the answers a flood of pipelining clients has built at once.
   */
  readonly maxInflightRequests: number;
  /**
   * WRITE_STALL_TIMEOUT_MS (default 10000): a connection with answers waiting to be written whose client takes none of
   * their bytes for this long is closed; Node's own timeouts never end a connection whose client stops reading.
   */
  readonly writeStallTimeoutMs: number;
  /**
   * WRITE_BACKLOG_MAX_KB (default 1024): the answers a connection may have waiting behind the one being written, as a
   * client that pipelines requests and reads slowly piles them up; past it the connection is closed.
   */
  readonly writeBacklogMaxKb: number;
  /**
   * KEY_CACHE_TTL_MS (default 500, at most 900): how long a key lookup is reused. Revocations and plan changes
   * reach a running server within this bound; 0 looks every key up on every request.
   */
  readonly keyCacheTtlMs: number;
  /**
   * LISTING_CACHE_TTL_MS (default 250, at most 900): how long an owner's contact count and listing version are
   * reused before the database is asked again. Contact changes reach a running server within this bound; 0 asks
   * on every request.
   */
  readonly listingCacheTtlMs: number;
  /**
   * CHANGES_RETENTION_DAYS (default 30, 1 to 3650): how long the change feed keeps changes. A sync token older than
   * this gets 410, and the server prunes what no live token can still need.
   */
  readonly changesRetentionDays: number;
  /** DB_STATEMENT_TIMEOUT_MS (default 5000): PostgreSQL statement_timeout, SQLite busy_timeout, for the server. */
  readonly dbStatementTimeoutMs: number;
  /** DB_POOL_SIZE and DB_QUEUE_LIMIT (defaults 3 and 64): PostgreSQL connections per process, and statements that may wait for one. */
  readonly dbPool: { readonly size: number; readonly queueLimit: number };
  /** SHUTDOWN_TIMEOUT_MS (default 10000): on SIGTERM/SIGINT, in-flight requests get this long before exit(1). */
  readonly shutdownTimeoutMs: number;
  /** TRUST_PROXY (default false): true, false, or the proxies' addresses and CIDR ranges. */
  readonly trustProxy: TrustProxy;
  /** CORS_ORIGINS (default none): comma-separated origins allowed to call the API from a browser. */
  readonly corsOrigins: readonly string[];
  /** HSTS_MAX_AGE (default unset): send Strict-Transport-Security with this max-age in seconds. */
  readonly hstsMaxAgeSeconds: number | null;
  /** OAuth for /mcp: OAUTH_ISSUER, OAUTH_EXTERNAL_*, the consent page's branding (src/oauth/oauth-config.ts). */
  readonly oauth: OAuthConfig;
  /**
   * CONTACT_URL_TEMPLATE (default unset): the link the MCP `search` and `fetch` tools give each contact, with `{id}`
   * replaced, like `https://app.example.com/contacts/{id}`. Unset, the link is the contact in this API.
   */
  readonly contactUrlTemplate: string | null;
  /** How the OpenAPI document names this deployment: PUBLIC_URL and API_CONTACT. */
  readonly openApi: OpenApiConfig;
  /** The admin API (docs/admin-api.md): ADMIN_TOKEN, ADMIN_HOST, ADMIN_PORT, ADMIN_BODY_LIMIT_MB. */
  readonly admin: AdminConfig;
  /** Webhook delivery (docs/webhooks.md): WEBHOOK_RETRY_SCHEDULE, WEBHOOK_TIMEOUT_MS, WEBHOOKS_ALLOW_PRIVATE_URLS. */
  readonly webhooks: WebhooksConfig;
}

export interface WebhooksConfig {
  /**
   * WEBHOOK_RETRY_SCHEDULE (default `5s,5m,30m,2h,5h,10h,14h,20h,24h`): the waits before each retry of a failed
   * delivery, in milliseconds, each jittered by ±20 %; once the last retry fails the endpoint is disabled.
   */
  readonly retrySchedule: readonly number[];
  /** WEBHOOK_TIMEOUT_MS (default 15000): one whole attempt, connection to the response's end. */
  readonly timeoutMs: number;
  /**
   * WEBHOOKS_ALLOW_PRIVATE_URLS (default false): endpoints may be plain http and on loopback, private, link-local or
   * metadata addresses. For tests and private deployments: it opens delivery to the inside network.
   */
  readonly allowPrivateUrls: boolean;
}

export interface AdminConfig {
  /** ADMIN_TOKEN (at least 32 characters): the Bearer token of every admin request; null (unset) turns the admin API off. */
  readonly token: string | null;
  /** ADMIN_HOST (default 127.0.0.1): the address the admin API listens on. */
  readonly host: string;
  /** ADMIN_PORT (default 3001): the admin API's own port, never the public one. */
  readonly port: number;
  /** ADMIN_BODY_LIMIT_MB (default 64): the largest body of a contacts import, streamed. */
  readonly bodyLimitMb: number;
  /**
   * ADMIN_IMPORT_MAX_RECORDS (default 500,000): the most records one contacts import takes. An import's memory does not
   * grow with its records, its time does: 300,000 records took 10 to 55 s (SQLite, PostgreSQL) on a quiet or loaded 2-core
   * machine, so the default stays well within the import's time bound for the default ADMIN_BODY_LIMIT_MB (256 s).
   */
  readonly importMaxRecords: number;
}

export interface OpenApiConfig {
  /**
   * PUBLIC_URL (default `/`): the base URL clients reach the API at, the document's `servers` entry: an http(s) URL
   * without a trailing slash (`https://api.example.com`, or with the path a proxy mounts it under), or `/`.
   */
  readonly publicUrl: string;
  /** API_CONTACT (default none): whom integrators ask, an email address or an http(s) URL, the document's `info.contact`. */
  readonly contact: { readonly email: string } | { readonly url: string } | null;
}

export interface RateLimitConfig {
  /** Requests per API key per minute (default 600); 0 turns rate limiting off. */
  readonly perMinute: number;
  /**
   * Failed authentications per client address per minute (default 60), across REST, /mcp, CardDAV and the OAuth
   * consent page; past it the address gets 429 whatever key it sends. 0 turns it off; it holds whatever `perMinute` says.
   */
  readonly authFailuresPerMinute: number;
  /** redis:// or rediss:// URL shared by every instance; null counts in memory (one instance). */
  readonly redisUrl: string | null;
  /** Prefix of the Redis keys (default `contacts-api:rate-limit:`), so deployments can share a Redis. */
  readonly redisPrefix: string;
  /** OAuth client registrations per client address per minute (default 20); 0 turns that limit off. */
  readonly oauthRegistrationsPerMinute: number;
  /** OAuth authorization requests (`/oauth/authorize`, `/oauth/par`) per client address per minute (default 60); 0 = off. */
  readonly oauthAuthorizationsPerMinute: number;
}

export interface MetricsConfig {
  /** A port of its own for GET /metrics, or null. */
  readonly port: number | null;
  /** The address that port listens on (default 127.0.0.1). */
  readonly host: string;
  /** A bearer token that unlocks GET /metrics on the API's own port, or null. */
  readonly token: string | null;
}

/** Whose X-Forwarded-* headers are believed: nobody, everybody, or peers at these addresses/ranges. */
export type TrustProxy = boolean | readonly string[];

export const DEFAULT_RATE_LIMIT_PER_MINUTE = 600;
export const DEFAULT_AUTH_FAILURES_PER_MINUTE = 60;
export const DEFAULT_OAUTH_REGISTRATIONS_PER_MINUTE = 20;
export const DEFAULT_OAUTH_AUTHORIZATIONS_PER_MINUTE = 60;
export const DEFAULT_REQUEST_TIMEOUT_MS = 10_000;
export const DEFAULT_BODY_READ_TIMEOUT_MS = 30_000;
export const DEFAULT_KEY_CACHE_TTL_MS = 500;
export const DEFAULT_LISTING_CACHE_TTL_MS = 250;
export const DEFAULT_CHANGES_RETENTION_DAYS = 30;
export const DEFAULT_WORKER_HEAP_MB = 128;
export const DEFAULT_MCP_INFLIGHT_MB = 8;
export const DEFAULT_MAX_INFLIGHT_REQUESTS = 256;
export const DEFAULT_WRITE_STALL_TIMEOUT_MS = 10_000;
export const DEFAULT_WRITE_BACKLOG_MAX_KB = 1024;
/** Changes made with the CLI must reach a running server within one second. */
const MAX_CACHE_TTL_MS = 900;
export const DEFAULT_DB_STATEMENT_TIMEOUT_MS = 5_000;
export const DEFAULT_SHUTDOWN_TIMEOUT_MS = 10_000;
export const DEFAULT_ADMIN_PORT = 3001;
export const DEFAULT_ADMIN_BODY_LIMIT_MB = 64;
export const DEFAULT_ADMIN_IMPORT_MAX_RECORDS = 500_000;
export const DEFAULT_WEBHOOK_TIMEOUT_MS = 15_000;
/** An admin token must be long enough that guessing it is hopeless. */
export const ADMIN_TOKEN_MIN_LENGTH = 32;
const HOUR_MS = 3_600_000;

export class ConfigError extends Error {
  override name = 'ConfigError';
}

const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'];

/**
 * Parses and freezes the configuration; a bad value throws ConfigError naming the variable. `listen` is where
 * `serve` was told to listen (--host, --port), over HOST and PORT: what depends on the address follows it.
 */
export function loadConfig(env: NodeJS.ProcessEnv = process.env, listen: { host?: string; port?: number } = {}): Config {
  const database = Object.freeze(read('DATABASE_URL', () => parseDatabaseUrl(env.DATABASE_URL)));
  const port = listen.port ?? parsePort(env.PORT, 'PORT');
  const host = listen.host ?? (env.HOST?.trim() || DEFAULT_HOST);
  return Object.freeze({
    database,
    databaseRead: read('DATABASE_READ_URL', () => parseReadReplicaUrl(env.DATABASE_READ_URL, database)),
    host,
    port,
    apiKeyPrefix: read('API_KEY_PREFIX', () => parseKeyPrefix(env.API_KEY_PREFIX)),
    logLevel: read('LOG_LEVEL', () => parseLogLevel(env.LOG_LEVEL)),
    rateLimit: Object.freeze({
      perMinute: read('RATE_LIMIT_PER_MINUTE', () => parseInteger(env.RATE_LIMIT_PER_MINUTE, DEFAULT_RATE_LIMIT_PER_MINUTE, 0, 1_000_000)),
      authFailuresPerMinute: read('AUTH_FAILURES_PER_MINUTE', () =>
        parseInteger(env.AUTH_FAILURES_PER_MINUTE, DEFAULT_AUTH_FAILURES_PER_MINUTE, 0, 1_000_000),
      ),
      redisUrl: read('REDIS_URL', () => parseRedisUrl(env.REDIS_URL)),
      redisPrefix: read('RATE_LIMIT_REDIS_PREFIX', () => parseRedisPrefix(env.RATE_LIMIT_REDIS_PREFIX)),
      oauthRegistrationsPerMinute: read('OAUTH_REGISTRATIONS_PER_MINUTE', () =>
        parseInteger(env.OAUTH_REGISTRATIONS_PER_MINUTE, DEFAULT_OAUTH_REGISTRATIONS_PER_MINUTE, 0, 1_000_000),
      ),
      oauthAuthorizationsPerMinute: read('OAUTH_AUTHORIZATIONS_PER_MINUTE', () =>
        parseInteger(env.OAUTH_AUTHORIZATIONS_PER_MINUTE, DEFAULT_OAUTH_AUTHORIZATIONS_PER_MINUTE, 0, 1_000_000),
      ),
    }),
    metrics: read('METRICS_TOKEN', () => parseMetrics(env)),
    workers: read('WORKERS', () => (isUnset(env.WORKERS) ? null : parseInteger(env.WORKERS, 1, 1, MAX_WORKERS))),
    workerHeapMb: read('WORKER_HEAP_MB', () => parseInteger(env.WORKER_HEAP_MB, DEFAULT_WORKER_HEAP_MB, 64, 65_536)),
    keyCacheTtlMs: read('KEY_CACHE_TTL_MS', () => parseInteger(env.KEY_CACHE_TTL_MS, DEFAULT_KEY_CACHE_TTL_MS, 0, MAX_CACHE_TTL_MS)),
    listingCacheTtlMs: read('LISTING_CACHE_TTL_MS', () =>
      parseInteger(env.LISTING_CACHE_TTL_MS, DEFAULT_LISTING_CACHE_TTL_MS, 0, MAX_CACHE_TTL_MS),
    ),
    changesRetentionDays: read('CHANGES_RETENTION_DAYS', () =>
      parseInteger(env.CHANGES_RETENTION_DAYS, DEFAULT_CHANGES_RETENTION_DAYS, 1, 3650),
    ),
    requestTimeoutMs: read('REQUEST_TIMEOUT_MS', () => parseInteger(env.REQUEST_TIMEOUT_MS, DEFAULT_REQUEST_TIMEOUT_MS, 1, HOUR_MS)),
    bodyReadTimeoutMs: read('BODY_READ_TIMEOUT_MS', () =>
      parseInteger(env.BODY_READ_TIMEOUT_MS, DEFAULT_BODY_READ_TIMEOUT_MS, 100, HOUR_MS),
    ),
    // 2 MB holds one whole batch (a 1 MiB response and the answer being built), so every request can run when alone.
    mcpInflightMb: read('MCP_INFLIGHT_MB', () => parseInteger(env.MCP_INFLIGHT_MB, DEFAULT_MCP_INFLIGHT_MB, 2, 65_536)),
    maxInflightRequests: read('MAX_INFLIGHT_REQUESTS', () =>
      parseInteger(env.MAX_INFLIGHT_REQUESTS, DEFAULT_MAX_INFLIGHT_REQUESTS, 1, 1_000_000),
    ),
    writeStallTimeoutMs: read('WRITE_STALL_TIMEOUT_MS', () =>
      parseInteger(env.WRITE_STALL_TIMEOUT_MS, DEFAULT_WRITE_STALL_TIMEOUT_MS, 100, HOUR_MS),
    ),
    writeBacklogMaxKb: read('WRITE_BACKLOG_MAX_KB', () =>
      parseInteger(env.WRITE_BACKLOG_MAX_KB, DEFAULT_WRITE_BACKLOG_MAX_KB, 16, 1_048_576),
    ),
    dbStatementTimeoutMs: read('DB_STATEMENT_TIMEOUT_MS', () =>
      parseInteger(env.DB_STATEMENT_TIMEOUT_MS, DEFAULT_DB_STATEMENT_TIMEOUT_MS, 1, HOUR_MS),
    ),
    dbPool: Object.freeze({
      size: read('DB_POOL_SIZE', () => parseInteger(env.DB_POOL_SIZE, DEFAULT_POOL.size, 1, 1000)),
      queueLimit: read('DB_QUEUE_LIMIT', () => parseInteger(env.DB_QUEUE_LIMIT, DEFAULT_POOL.queueLimit, 0, 100_000)),
    }),
    shutdownTimeoutMs: read('SHUTDOWN_TIMEOUT_MS', () => parseInteger(env.SHUTDOWN_TIMEOUT_MS, DEFAULT_SHUTDOWN_TIMEOUT_MS, 1, HOUR_MS)),
    trustProxy: read('TRUST_PROXY', () => parseTrustProxy(env.TRUST_PROXY)),
    corsOrigins: read('CORS_ORIGINS', () => parseCorsOrigins(env.CORS_ORIGINS)),
    hstsMaxAgeSeconds: read('HSTS_MAX_AGE', () => (isUnset(env.HSTS_MAX_AGE) ? null : parseInteger(env.HSTS_MAX_AGE, 0, 0, 1_000_000_000))),
    oauth: parseOAuthConfig(env, listenUrlOf(host, port), read),
    contactUrlTemplate: read('CONTACT_URL_TEMPLATE', () => parseContactUrlTemplate(env.CONTACT_URL_TEMPLATE)),
    openApi: Object.freeze({
      publicUrl: read('PUBLIC_URL', () => parsePublicUrl(env.PUBLIC_URL)),
      contact: read('API_CONTACT', () => parseApiContact(env.API_CONTACT)),
    }),
    admin: parseAdmin(env, port),
    webhooks: Object.freeze({
      retrySchedule: read('WEBHOOK_RETRY_SCHEDULE', () =>
        Object.freeze(
          parseRetrySchedule(isUnset(env.WEBHOOK_RETRY_SCHEDULE) ? DEFAULT_WEBHOOK_RETRY_SCHEDULE : env.WEBHOOK_RETRY_SCHEDULE),
        ),
      ),
      timeoutMs: read('WEBHOOK_TIMEOUT_MS', () => parseInteger(env.WEBHOOK_TIMEOUT_MS, DEFAULT_WEBHOOK_TIMEOUT_MS, 100, HOUR_MS)),
      allowPrivateUrls: read('WEBHOOKS_ALLOW_PRIVATE_URLS', () => parseBoolean(env.WEBHOOKS_ALLOW_PRIVATE_URLS)),
    }),
  });
}

function parseAdmin(env: NodeJS.ProcessEnv, publicPort: number): AdminConfig {
  const token = read('ADMIN_TOKEN', () => parseAdminToken(env.ADMIN_TOKEN));
  const port = isUnset(env.ADMIN_PORT) ? DEFAULT_ADMIN_PORT : parsePort(env.ADMIN_PORT, 'ADMIN_PORT');
  // Workers of a cluster would share one port between both apps, each connection going to either.
  if (token !== null && port !== 0 && port === publicPort) throw new ConfigError(`ADMIN_PORT must differ from the public port (${port})`);
  return Object.freeze({
    token,
    host: env.ADMIN_HOST?.trim() || DEFAULT_HOST,
    port,
    bodyLimitMb: read('ADMIN_BODY_LIMIT_MB', () => parseInteger(env.ADMIN_BODY_LIMIT_MB, DEFAULT_ADMIN_BODY_LIMIT_MB, 1, 4096)),
    importMaxRecords: read('ADMIN_IMPORT_MAX_RECORDS', () =>
      parseInteger(env.ADMIN_IMPORT_MAX_RECORDS, DEFAULT_ADMIN_IMPORT_MAX_RECORDS, 1, 1_000_000_000),
    ),
  });
}

const MAX_WORKERS = 64;
export const DEFAULT_PORT = 3000;
export const DEFAULT_HOST = '127.0.0.1';

/**
 * The URL a server listening on host:port is reached at from this machine, as `serve` prints it: an address that
 * means every interface is reached on loopback.
 */
export function listenUrlOf(host: string, port: number): string {
  const reachable = host === '0.0.0.0' ? '127.0.0.1' : host === '::' ? '::1' : host;
  return `http://${isIP(reachable) === 6 ? `[${reachable}]` : reachable}:${port}`;
}

/** A worker count for `serve --workers`, 1–64. */
export function parseWorkerCount(text: string, name: string): number {
  try {
    return parseInteger(text, 1, 1, MAX_WORKERS);
  } catch (error) {
    throw new ConfigError(`${name} ${(error as Error).message}`);
  }
}

/** A TCP port 0–65535 (0 picks a free one); `undefined` or empty gives 3000. */
export function parsePort(text: string | undefined, name: string): number {
  if (text === undefined || text.trim() === '') return DEFAULT_PORT;
  const port = /^\d{1,5}$/.test(text.trim()) ? Number(text) : Number.NaN;
  if (!(port >= 0 && port <= 65535)) throw new ConfigError(`${name} must be a port number from 0 to 65535; got "${text}"`);
  return port;
}

function parseReadReplicaUrl(text: string | undefined, primary: DatabaseTarget): DatabaseTarget | null {
  if (text === undefined || text.trim() === '') return null;
  if (!/^postgres(ql)?:\/\//.test(text)) throw new Error('must be a postgres:// or postgresql:// URL');
  if (primary.kind !== 'postgres') throw new Error('needs a PostgreSQL DATABASE_URL: read replicas are for PostgreSQL only');
  return Object.freeze({ kind: 'postgres', url: text });
}

function parseKeyPrefix(text: string | undefined): string {
  const prefix = text?.trim() || 'cnt';
  if (!KEY_PREFIX_PATTERN.test(prefix)) {
    throw new Error(`must be 2–16 lowercase letters or digits starting with a letter; got "${prefix}"`);
  }
  return prefix;
}

function parseLogLevel(text: string | undefined): string {
  const level = text?.trim() || 'info';
  if (!LOG_LEVELS.includes(level)) throw new Error(`must be one of ${LOG_LEVELS.join(', ')}; got "${level}"`);
  return level;
}

const isUnset = (text: string | undefined): text is undefined => text === undefined || text.trim() === '';

/** A base-10 integer from `min` to `max`; unset or blank gives `fallback`. */
function parseInteger(text: string | undefined, fallback: number, min: number, max: number): number {
  if (isUnset(text)) return fallback;
  const value = /^\d{1,10}$/.test(text.trim()) ? Number(text) : Number.NaN;
  if (!(value >= min && value <= max)) throw new Error(`must be an integer from ${min} to ${max}; got "${text}"`);
  return value;
}

function parseRedisUrl(text: string | undefined): string | null {
  if (isUnset(text)) return null;
  // The value is not echoed: it may carry a password.
  if (!/^rediss?:\/\//.test(text.trim()) || !URL.canParse(text.trim())) throw new Error('must be a redis:// or rediss:// URL');
  return text.trim();
}

function parseRedisPrefix(text: string | undefined): string {
  const prefix = isUnset(text) ? 'contacts-api:rate-limit:' : text.trim();
  if (!/^[A-Za-z0-9:._-]{1,64}$/.test(prefix)) throw new Error(`must be 1–64 letters, digits or ":._-"; got "${prefix}"`);
  return prefix;
}

function parseMetrics(env: NodeJS.ProcessEnv): MetricsConfig {
  const port = isUnset(env.METRICS_PORT) ? null : parsePort(env.METRICS_PORT, 'METRICS_PORT');
  const token = isUnset(env.METRICS_TOKEN) ? null : env.METRICS_TOKEN;
  // The value is not echoed: it is a secret.
  if (token !== null && !/^[\x21-\x7e]{16,256}$/.test(token)) throw new Error('must be 16–256 visible ASCII characters, no spaces');
  if (token !== null && port !== null) throw new Error('and METRICS_PORT are alternatives: set one of them');
  return Object.freeze({ port, host: env.METRICS_HOST?.trim() || '127.0.0.1', token });
}

const NAMED_PROXY_RANGES = ['loopback', 'linklocal', 'uniquelocal'];

function parseTrustProxy(text: string | undefined): TrustProxy {
  const value = text?.trim().toLowerCase() ?? '';
  if (value === '' || value === 'false') return false;
  if (value === 'true') return true;
  if (/^\d+$/.test(value)) {
    // Fastify ≥ 5.12 trusts no one for a bare hop count, since it can't tell a proxy from a direct client.
    throw new Error(
      `takes the proxies' addresses or CIDR ranges, not a hop count ("${value}"): a count can't tell a proxy from a client that connects directly`,
    );
  }
  const entries = value.split(',').map((entry) => entry.trim());
  for (const entry of entries) {
    if (/^::ffff:[\d.]+\/\d+$/.test(entry) && Number(entry.split('/')[1]) < 96) {
      // An IPv4-sized prefix on an IPv4-mapped address would trust every IPv4 client (CVE-2026-92395).
      throw new Error(`"${entry}": an IPv4-mapped range needs a prefix of 96 or more (::ffff:10.0.0.0/104), or write it as IPv4`);
    }
    if (!NAMED_PROXY_RANGES.includes(entry) && !isAddressOrRange(entry)) {
      throw new Error(
        `must be true, false, or comma-separated IP addresses, CIDR ranges or ${NAMED_PROXY_RANGES.join('/')}; got "${entry}"`,
      );
    }
  }
  return Object.freeze(entries);
}

function isAddressOrRange(entry: string): boolean {
  const [address = '', bits, ...rest] = entry.split('/');
  const version = isIP(address);
  if (version === 0 || rest.length > 0) return false;
  return bits === undefined || (/^\d{1,3}$/.test(bits) && Number(bits) <= (version === 4 ? 32 : 128));
}

function parseCorsOrigins(text: string | undefined): readonly string[] {
  const origins = (text ?? '')
    .split(',')
    .map((origin) => origin.trim())
    .filter((origin) => origin !== '');
  for (const origin of origins) {
    const url = URL.canParse(origin) ? new URL(origin) : null;
    if (!url || !['http:', 'https:'].includes(url.protocol) || url.origin !== origin) {
      throw new Error(
        `must list origins exactly as browsers send them (https://app.example.com, no path or trailing slash); got "${origin}"`,
      );
    }
  }
  return Object.freeze(origins);
}

function parseContactUrlTemplate(text: string | undefined): string | null {
  const trimmed = text?.trim() ?? '';
  if (trimmed === '') return null;
  const sample = trimmed.replaceAll('{id}', '00000000-0000-4000-8000-000000000000');
  if (!trimmed.includes('{id}') || !URL.canParse(sample) || !['http:', 'https:'].includes(new URL(sample).protocol)) {
    throw new Error(`must be an http(s) URL containing {id}, like https://app.example.com/contacts/{id}; got "${trimmed}"`);
  }
  return trimmed;
}

export const DEFAULT_PUBLIC_URL = '/';

function parsePublicUrl(text: string | undefined): string {
  const trimmed = text?.trim() ?? '';
  if (trimmed === '' || trimmed === DEFAULT_PUBLIC_URL) return DEFAULT_PUBLIC_URL;
  const url = URL.canParse(trimmed) ? new URL(trimmed) : null;
  if (!url || !['http:', 'https:'].includes(url.protocol) || url.search !== '' || url.hash !== '' || trimmed.endsWith('/')) {
    throw new Error(`must be an http(s) URL without query or trailing slash, like https://api.example.com, or /; got "${trimmed}"`);
  }
  return trimmed;
}

function parseApiContact(text: string | undefined): OpenApiConfig['contact'] {
  const trimmed = text?.trim() ?? '';
  if (trimmed === '') return null;
  if (/^[^\s@]+@[^\s@]+\.[^\s@]+$/.test(trimmed)) return Object.freeze({ email: trimmed });
  if (URL.canParse(trimmed) && ['http:', 'https:'].includes(new URL(trimmed).protocol)) return Object.freeze({ url: trimmed });
  throw new Error(`must be an email address or an http(s) URL; got "${trimmed}"`);
}

function parseAdminToken(text: string | undefined): string | null {
  if (isUnset(text)) return null;
  // The value is not echoed: it is a secret.
  if (!new RegExp(`^[\\x21-\\x7e]{${ADMIN_TOKEN_MIN_LENGTH},1024}$`).test(text)) {
    throw new Error(`must be ${ADMIN_TOKEN_MIN_LENGTH}–1024 visible ASCII characters, no spaces`);
  }
  return text;
}

function read<T>(name: string, parse: () => T): T {
  try {
    return parse();
  } catch (error) {
    if (error instanceof ConfigError) throw error;
    const message = (error as Error).message.replace(/^DATABASE_URL /, '');
    throw new ConfigError(`${name} ${message}`);
  }
}
