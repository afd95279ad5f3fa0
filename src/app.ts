import Fastify, { type FastifyBaseLogger, type FastifyInstance } from 'fastify';
import swagger from '@fastify/swagger';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { Authenticator } from './auth/authenticator.js';
import carddav from './carddav/plugin.js';
import type { Config, TrustProxy } from './config.js';
import restApi from './http/plugin.js';
import mcp from './mcp/plugin.js';
import { registerMetricsRoute, type MetricsSource } from './metrics/endpoint.js';
import type { Metrics } from './metrics/metrics.js';
import metrics from './metrics/plugin.js';
import oauth from './oauth/plugin.js';
import type { RequestCounter } from './rate-limit/request-counter.js';
import type { Store } from './store/store.js';
import { openApiOptions } from './web/openapi-document.js';
import answerTimeout from './web/plugins/answer-timeout.js';
import bodyReadTimeout from './web/plugins/body-read-timeout.js';
import compression from './web/plugins/compression.js';
import cors from './web/plugins/cors.js';
import errors from './web/plugins/errors.js';
import rateLimit from './web/plugins/rate-limit.js';
import requestGuards from './web/plugins/request-guards.js';
import requestId from './web/plugins/request-id.js';
import securityHeaders from './web/plugins/security-headers.js';
import slowReaders from './web/plugins/slow-readers.js';
import { jsonServerOptions } from './web/server-options.js';
import { serviceKeyFrom } from './web/service-key.js';
import { DAY_MS } from './domain/duration.js';

const KIB = 1024;
const MIB = 1024 * KIB;

/** The settings the app reads: src/config.ts parses them and holds every default. */
export type AppConfig = Pick<
  Config,
  | 'apiKeyPrefix'
  | 'bodyReadTimeoutMs'
  | 'changesRetentionDays'
  | 'contactUrlTemplate'
  | 'corsOrigins'
  | 'hstsMaxAgeSeconds'
  | 'maxInflightRequests'
  | 'mcpInflightMb'
  | 'metrics'
  | 'oauth'
  | 'pageCaches'
  | 'openApi'
  | 'rateLimit'
  | 'requestTimeoutMs'
  | 'trustProxy'
  | 'writeBacklogMaxKb'
  | 'writeStallTimeoutMs'
>;

export interface AppDependencies {
  config: AppConfig;
  store: Store;
  authenticator: Authenticator;
  /** A pino logger, or false for none (tests). */
  logger: FastifyBaseLogger | false;
  /** The Prometheus metrics the app counts into. */
  metrics: Metrics;
  /** Where rate-limit hits are counted (memory, Redis or a cluster's primary); null when every limit is 0. */
  requestCounter: RequestCounter | null;
  /** What GET /metrics serves, when not `metrics`' own registry (a cluster worker serves every worker's). */
  metricsSource?: MetricsSource;
}

/**
 * Builds the whole HTTP application without listening: the server and every test use this. The cross-cutting plugins
 * (src/web/, src/metrics/) come first, before any route, in the order their hooks run; then the doors, each a plugin of
 * its own: the REST API (with its public routes), OAuth, MCP, CardDAV; then GET /metrics when METRICS_TOKEN is set.
 */
export async function buildApp(deps: AppDependencies): Promise<FastifyInstance> {
  const { config, store, authenticator } = deps;
  const { requestTimeoutMs } = config;
  const { perMinute, authFailuresPerMinute } = config.rateLimit;
  const app = Fastify({
    ...jsonServerOptions({ logger: deps.logger, requestTimeoutMs }),
    trustProxy: toFastifyTrustProxy(config.trustProxy),
  }).withTypeProvider<TypeBoxTypeProvider>();
  await app.register(slowReaders, { stallTimeoutMs: config.writeStallTimeoutMs, maxBacklogBytes: config.writeBacklogMaxKb * KIB });
  await app.register(errors);
  await app.register(answerTimeout, { timeoutMs: requestTimeoutMs });
  await app.register(bodyReadTimeout, { timeoutMs: config.bodyReadTimeoutMs });
  // These run first, so every response (404 and 405 included) carries their headers and is counted.
  await app.register(requestId);
  await app.register(metrics, { metrics: deps.metrics });
  await app.register(securityHeaders, { hstsMaxAgeSeconds: config.hstsMaxAgeSeconds });
  await app.register(cors, { origins: config.corsOrigins });
  await app.register(requestGuards, { maxInflightRequests: config.maxInflightRequests });
  await app.register(compression);
  await app.register(
    swagger,
    openApiOptions({
      apiKeyPrefix: config.apiKeyPrefix,
      ...config.openApi,
      rateLimited: perMinute > 0,
      authFailuresLimited: authFailuresPerMinute > 0,
    }),
  );
  await app.register(rateLimit, { perMinute, authFailuresPerMinute, counter: deps.requestCounter });

  const serviceKey = serviceKeyFrom(store.oauth);
  const { compressedBytes, plainBytes } = config.pageCaches;
  await app.register(restApi, {
    store,
    authenticator,
    serviceKey,
    retentionMs: config.changesRetentionDays * DAY_MS,
    pageCaches: { compressedBytes, plainBytes },
  });
  await app.register(oauth, {
    config: config.oauth,
    store: store.oauth,
    authenticator,
    limits: {
      registrationsPerMinute: config.rateLimit.oauthRegistrationsPerMinute,
      authorizationsPerMinute: config.rateLimit.oauthAuthorizationsPerMinute,
    },
    counter: deps.requestCounter,
  });
  await app.register(mcp, {
    store,
    authenticator,
    apiKeyPrefix: config.apiKeyPrefix,
    oauth: config.oauth,
    corsOrigins: config.corsOrigins,
    contactUrlTemplate: config.contactUrlTemplate,
    inflightBytes: config.mcpInflightMb * MIB,
    serviceKey,
    changesRetentionMs: config.changesRetentionDays * DAY_MS,
  });
  await app.register(carddav, {
    contacts: store.contacts,
    authenticator,
    serviceKey,
    retentionMs: config.changesRetentionDays * DAY_MS,
  });
  const { token } = config.metrics;
  if (token) registerMetricsRoute(app, { registry: deps.metricsSource ?? deps.metrics.registry, token });
  await app.ready();
  return app;
}

function toFastifyTrustProxy(trustProxy: TrustProxy): boolean | string[] {
  return typeof trustProxy === 'object' ? [...trustProxy] : trustProxy;
}
