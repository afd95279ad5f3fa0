import type { AddressInfo } from 'node:net';
import type { FastifyInstance } from 'fastify';
import type { Logger } from 'pino';
import type { Registry } from 'prom-client';
import { buildAdminApp } from './admin/app.js';
import { createAuthenticator } from './auth/authenticator.js';
import { listenUrlOf, type Config, type RateLimitConfig } from './config.js';
import { RATE_LIMIT_WINDOW_MS } from './domain/rate-limit.js';
import { buildApp } from './app.js';
import { inflightRequests } from './web/inflight-requests.js';
import { createMetrics } from './metrics/metrics.js';
import { listenForMetrics, type MetricsListener, type MetricsSource } from './metrics/endpoint.js';
import { stdoutDestination } from './log-destination.js';
import { createLogger } from './logger.js';
import { createMemoryCounter } from './rate-limit/memory-counter.js';
import type { RequestCounter } from './rate-limit/request-counter.js';
import { openStore } from './store/open-store.js';
import { withReadReplica } from './store/read-replica.js';
import type { Store } from './store/store.js';
import { pruneChangesPeriodically } from './store/change-pruning.js';
import { deliversWebhooks, startWebhookDispatcher } from './webhooks/start-dispatcher.js';

export interface RunningServer {
  app: FastifyInstance;
  store: Store;
  logger: Logger;
  /** Where the server is reached from this machine: the default OAuth issuer (config.ts's listenUrlOf). */
  url: string;
  /** Where METRICS_PORT serves GET /metrics, or null. */
  metricsUrl: string | null;
  /** The admin API (ADMIN_TOKEN set), on its own address; null when it is off. */
  admin: { app: FastifyInstance; url: string } | null;
  /** Stops accepting connections, lets in-flight requests finish, then closes Redis and the database. */
  close(): Promise<void>;
}

/**
 * What a cluster worker leaves to its primary (src/cluster/worker.ts makes it; `serve` passes it): counting rate-limit
 * hits for every worker when there is no Redis, and gathering every worker's metrics.
 */
export interface ClusterWorker {
  /** A counter kept by the primary, so that a limit holds per instance rather than per worker. */
  createCounter(): RequestCounter;
  /** Lets the primary collect this worker's metrics; returns every worker's, which GET /metrics then serves. */
  shareMetrics(registry: Registry): MetricsSource;
  /**
   * Whether the primary gave this worker the webhook dispatcher's role, which it gives one worker at a time: what a
   * database that takes one writer at a time runs in one process only (src/webhooks/start-dispatcher.ts).
   */
  readonly deliversWebhooks: boolean;
}

/** A listener that could not bind its address, named for the one line `serve` prints (the admin API has its own). */
export class ListenError extends Error {
  override name = 'ListenError';
  constructor(
    readonly host: string,
    readonly port: number,
    cause: unknown,
  ) {
    super(`cannot listen on ${host}:${port}`, { cause });
  }

  get code(): unknown {
    return (this.cause as { code?: unknown } | null)?.code;
  }
}

async function listenOn(app: FastifyInstance, host: string, port: number): Promise<string> {
  try {
    await app.listen({ host, port });
  } catch (error) {
    throw new ListenError(host, port, error);
  }
  // The URL the default OAuth issuer names (config.ts), which Fastify would write otherwise for `::` or `localhost`.
  return listenUrlOf(host, (app.server.address() as AddressInfo).port);
}

/** Closes the app: in-flight requests finish, then every kept-alive socket is closed, so none holds the process open. */
async function closeApp(app: FastifyInstance): Promise<void> {
  const inflight = inflightRequests(app.server);
  const sweep = setInterval(() => {
    if (inflight() === 0) app.server.closeAllConnections();
  }, 50);
  try {
    await app.close();
  } finally {
    clearInterval(sweep);
  }
}

/** Where requests are counted for the rate limit: Redis when several instances share it, else memory. */
async function openRequestCounter(rateLimit: RateLimitConfig): Promise<RequestCounter> {
  if (rateLimit.redisUrl === null) return createMemoryCounter({ windowMs: RATE_LIMIT_WINDOW_MS });
  // Loaded only when used: ioredis would take its share of every worker's memory for nothing.
  const { connectRedisCounter } = await import('./rate-limit/redis-counter.js');
  return connectRedisCounter({ url: rateLimit.redisUrl, prefix: rateLimit.redisPrefix, windowMs: RATE_LIMIT_WINDOW_MS });
}

/**
 * Opens the database, applies migrations and listens. A cluster worker leaves process-wide duties to its
 * primary: migrations, rate-limit counts without Redis, the metrics port, and the aggregate behind METRICS_TOKEN.
 */
export async function startServer(
  config: Config,
  listen: { host: string; port: number },
  options: { worker?: ClusterWorker } = {},
): Promise<RunningServer> {
  const logger = createLogger(config.logLevel);
  const storeOptions = {
    statementTimeoutMs: config.dbStatementTimeoutMs,
    listingStateTtlMs: config.listingCacheTtlMs,
    pageCacheBytes: config.pageCaches.documentBytes,
    pool: config.dbPool,
    pooler: config.dbPooler,
    // Only `migrate` and `demo` create a SQLite database: a server that finds none (its folder moved away) fails to
    // start instead of serving an empty one.
    mustExist: true,
  };
  const primary = await openStore(config.database, storeOptions);
  // The replica store connects lazily, so opening it cannot fail and leave the primary open.
  const store = config.databaseRead
    ? withReadReplica(primary, await openStore(config.databaseRead, storeOptions), { log: logger })
    : primary;
  let counter: RequestCounter | null = null;
  let metricsListener: MetricsListener | null = null;
  // Closed if start-up fails after they were built.
  const apps: FastifyInstance[] = [];
  try {
    // A worker's primary has migrated already: a worker starts, and answers 503, while the database is down.
    if (!options.worker) {
      const applied = await store.migrate();
      if (applied.length > 0) logger.info({ versions: applied }, 'applied database migrations');
    }
    const authenticator = createAuthenticator({
      keys: store.keys,
      apiKeyPrefix: config.apiKeyPrefix,
      cacheTtlMs: config.keyCacheTtlMs,
      onTouchError: (error) => logger.warn({ err: error }, 'could not record API key use'),
    });
    const metrics = createMetrics({
      poolStats: store.poolStats?.bind(store),
      processMetrics: true,
      logLinesDropped: stdoutDestination().dropped,
    });
    const metricsSource = options.worker?.shareMetrics(metrics.registry);
    const {
      perMinute,
      authFailuresPerMinute,
      oauthRegistrationsPerMinute: registrationsPerMinute,
      oauthAuthorizationsPerMinute: authorizationsPerMinute,
    } = config.rateLimit;
    if (Math.max(perMinute, authFailuresPerMinute, registrationsPerMinute, authorizationsPerMinute) > 0) {
      counter =
        options.worker && config.rateLimit.redisUrl === null ? options.worker.createCounter() : await openRequestCounter(config.rateLimit);
      logger.info(
        { perMinute, authFailuresPerMinute, registrationsPerMinute, authorizationsPerMinute, counter: counter.kind },
        'rate limits per API key and client address',
      );
    }
    const app = await buildApp({ config, store, authenticator, logger, metrics, metricsSource, requestCounter: counter });
    apps.push(app);
    if (config.metrics.port !== null && !options.worker) {
      metricsListener = await listenForMetrics(metrics.registry, { host: config.metrics.host, port: config.metrics.port });
    }
    const url = await listenOn(app, listen.host, listen.port);
    let admin: RunningServer['admin'] = null;
    const { token, host: adminHost, port: adminPort } = config.admin;
    if (token !== null) {
      const adminApp = await buildAdminApp({ config: { ...config, admin: { ...config.admin, token } }, store, logger, metrics });
      apps.push(adminApp);
      admin = { app: adminApp, url: await listenOn(adminApp, adminHost, adminPort) };
    }
    const stopPruning = pruneChangesPeriodically(store, config.changesRetentionDays, logger);
    const dispatcher = deliversWebhooks(store, options.worker) ? startWebhookDispatcher(store, config, logger, metrics.webhooks) : null;
    return {
      app,
      store,
      logger,
      url,
      metricsUrl: metricsListener?.url ?? null,
      admin,
      close: async () => {
        stopPruning();
        // Both listeners and the dispatcher stop at once, within the one shutdown bound: attempts in flight get half of
        // it, then are cut short (their changes are sent again later).
        await Promise.all([closeApp(app), admin && closeApp(admin.app), dispatcher?.stop(config.shutdownTimeoutMs / 2)]);
        await metricsListener?.close();
        await counter?.close();
        await store.close();
      },
    };
  } catch (error) {
    await Promise.all(apps.map((app) => app.close()));
    await metricsListener?.close();
    await counter?.close();
    await store.close();
    throw error;
  }
}
