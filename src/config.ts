import { isIP } from 'node:net';
import { oauthConfigOf, type OAuthConfig } from './config/oauth.js';
import { readEnvironment, readVariable } from './config/read-environment.js';
import { ENVIRONMENT } from './config/schema.js';
import type { DatabaseTarget } from './store/open-store.js';
import type { PoolerSetting } from './domain/database-url.js';

export { ConfigError } from './config/config-error.js';

const MIB = 1024 * 1024;
export type { ConsentBranding, ExternalIssuerConfig, OAuthConfig } from './config/oauth.js';
export {
  DEFAULT_AUTH_FAILURES_PER_MINUTE,
  DEFAULT_CHANGES_RETENTION_DAYS,
  DEFAULT_HOST,
  DEFAULT_OAUTH_AUTHORIZATIONS_PER_MINUTE,
  DEFAULT_OAUTH_REGISTRATIONS_PER_MINUTE,
} from './config/schema.js';

/** Settings read once from the environment at start-up; each variable's type, bounds and default: src/config/schema.ts. */
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
   * 64 KiB/s once it has taken this long, gets 408 and its connection is closed (src/web/body-read-timeout.ts).
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
   * What each process may keep of listing pages, in bytes: PAGE_CACHE_MB (default 4) as documents, the pages read
   * again; COMPRESSED_PAGE_CACHE_MB (default 32) compressed, every page served, sent again without a database read;
   * PLAIN_PAGE_CACHE_MB (default 4) the hot pages as they are, for clients that take no coding. Memory against the
   * rate of pages read again (docs/configuration.md).
   */
  readonly pageCaches: { readonly documentBytes: number; readonly compressedBytes: number; readonly plainBytes: number };
  /**
   * CHANGES_RETENTION_DAYS (default 30, 1 to 3650): how long the change feed keeps changes. A sync token older than
   * this gets 410, and the server prunes what no live token can still need.
   */
  readonly changesRetentionDays: number;
  /** DB_STATEMENT_TIMEOUT_MS (default 5000): PostgreSQL statement_timeout, SQLite busy_timeout, for the server. */
  readonly dbStatementTimeoutMs: number;
  /** DB_POOL_SIZE and DB_QUEUE_LIMIT (defaults 3 and 64): PostgreSQL connections per process, and statements that may wait for one. */
  readonly dbPool: { readonly size: number; readonly queueLimit: number };
  /**
   * DB_POOLER (default auto): what sits between this service and PostgreSQL. `auto` finds out on the first connection;
   * `none` keeps session settings and prepared statements on each connection; `transaction` (PgBouncer's
   * pool_mode = transaction) leaves nothing on a server connection past a transaction.
   */
  readonly dbPooler: PoolerSetting;
  /** SHUTDOWN_TIMEOUT_MS (default 10000): on SIGTERM/SIGINT, in-flight requests get this long before exit(1). */
  readonly shutdownTimeoutMs: number;
  /** TRUST_PROXY (default false): true, false, or the proxies' addresses and CIDR ranges. */
  readonly trustProxy: TrustProxy;
  /** CORS_ORIGINS (default none): comma-separated origins allowed to call the API from a browser. */
  readonly corsOrigins: readonly string[];
  /** HSTS_MAX_AGE (default unset): send Strict-Transport-Security with this max-age in seconds. */
  readonly hstsMaxAgeSeconds: number | null;
  /** OAuth for /mcp: OAUTH_ISSUER, OAUTH_EXTERNAL_*, the consent page's branding (src/config/oauth.ts). */
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

/**
 * Parses and freezes the configuration; a bad value throws ConfigError naming the variable. `listen` is where
 * `serve` was told to listen (--host, --port), over HOST and PORT: what depends on the address follows it.
 */
export function loadConfig(env: NodeJS.ProcessEnv = process.env, listen: { host?: string; port?: number } = {}): Config {
  const read = readEnvironment(env, { HOST: listen.host, PORT: listen.port });
  return Object.freeze({
    database: read.DATABASE_URL,
    databaseRead: read.DATABASE_READ_URL ?? null,
    host: read.HOST,
    port: read.PORT,
    apiKeyPrefix: read.API_KEY_PREFIX,
    logLevel: read.LOG_LEVEL,
    rateLimit: Object.freeze({
      perMinute: read.RATE_LIMIT_PER_MINUTE,
      authFailuresPerMinute: read.AUTH_FAILURES_PER_MINUTE,
      redisUrl: read.REDIS_URL ?? null,
      redisPrefix: read.RATE_LIMIT_REDIS_PREFIX,
      oauthRegistrationsPerMinute: read.OAUTH_REGISTRATIONS_PER_MINUTE,
      oauthAuthorizationsPerMinute: read.OAUTH_AUTHORIZATIONS_PER_MINUTE,
    }),
    metrics: Object.freeze({ port: read.METRICS_PORT ?? null, host: read.METRICS_HOST, token: read.METRICS_TOKEN ?? null }),
    workers: read.WORKERS ?? null,
    workerHeapMb: read.WORKER_HEAP_MB,
    keyCacheTtlMs: read.KEY_CACHE_TTL_MS,
    listingCacheTtlMs: read.LISTING_CACHE_TTL_MS,
    pageCaches: Object.freeze({
      documentBytes: read.PAGE_CACHE_MB * MIB,
      compressedBytes: read.COMPRESSED_PAGE_CACHE_MB * MIB,
      plainBytes: read.PLAIN_PAGE_CACHE_MB * MIB,
    }),
    changesRetentionDays: read.CHANGES_RETENTION_DAYS,
    requestTimeoutMs: read.REQUEST_TIMEOUT_MS,
    bodyReadTimeoutMs: read.BODY_READ_TIMEOUT_MS,
    mcpInflightMb: read.MCP_INFLIGHT_MB,
    maxInflightRequests: read.MAX_INFLIGHT_REQUESTS,
    writeStallTimeoutMs: read.WRITE_STALL_TIMEOUT_MS,
    writeBacklogMaxKb: read.WRITE_BACKLOG_MAX_KB,
    dbStatementTimeoutMs: read.DB_STATEMENT_TIMEOUT_MS,
    dbPool: Object.freeze({ size: read.DB_POOL_SIZE, queueLimit: read.DB_QUEUE_LIMIT }),
    dbPooler: read.DB_POOLER,
    shutdownTimeoutMs: read.SHUTDOWN_TIMEOUT_MS,
    trustProxy: read.TRUST_PROXY,
    corsOrigins: read.CORS_ORIGINS,
    hstsMaxAgeSeconds: read.HSTS_MAX_AGE ?? null,
    oauth: oauthConfigOf(read, listenUrlOf(read.HOST, read.PORT)),
    contactUrlTemplate: read.CONTACT_URL_TEMPLATE ?? null,
    openApi: Object.freeze({ publicUrl: read.PUBLIC_URL, contact: read.API_CONTACT ?? null }),
    admin: Object.freeze({
      token: read.ADMIN_TOKEN ?? null,
      host: read.ADMIN_HOST,
      port: read.ADMIN_PORT,
      bodyLimitMb: read.ADMIN_BODY_LIMIT_MB,
      importMaxRecords: read.ADMIN_IMPORT_MAX_RECORDS,
    }),
    webhooks: Object.freeze({
      retrySchedule: read.WEBHOOK_RETRY_SCHEDULE,
      timeoutMs: read.WEBHOOK_TIMEOUT_MS,
      allowPrivateUrls: read.WEBHOOKS_ALLOW_PRIVATE_URLS,
    }),
  });
}

/**
 * The URL a server listening on host:port is reached at from this machine, as `serve` prints it: an address that
 * means every interface is reached on loopback.
 */
export function listenUrlOf(host: string, port: number): string {
  const reachable = host === '0.0.0.0' ? '127.0.0.1' : host === '::' ? '::1' : host;
  return `http://${isIP(reachable) === 6 ? `[${reachable}]` : reachable}:${port}`;
}

/** A worker count for `serve --workers`, 1–64; blank gives 1. */
export function parseWorkerCount(text: string, name: string): number {
  return (readVariable(name, ENVIRONMENT.properties.WORKERS, text) as number | undefined) ?? 1;
}

/** A TCP port 0–65535 (0 picks a free one); `undefined` or empty gives 3000. */
export function parsePort(text: string | undefined, name: string): number {
  return readVariable(name, ENVIRONMENT.properties.PORT, text) as number;
}
