import Fastify, { type FastifyBaseLogger, type FastifyInstance } from 'fastify';
import swagger from '@fastify/swagger';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { Authenticator } from '../auth/authenticator.js';
import {
  DEFAULT_CHANGES_RETENTION_DAYS,
  DEFAULT_MAX_INFLIGHT_REQUESTS,
  DEFAULT_MCP_INFLIGHT_MB,
  DEFAULT_WRITE_BACKLOG_MAX_KB,
  DEFAULT_WRITE_STALL_TIMEOUT_MS,
  DEFAULT_PORT,
  listenUrlOf,
  DEFAULT_PUBLIC_URL,
  DEFAULT_REQUEST_TIMEOUT_MS,
  type OpenApiConfig,
  type TrustProxy,
} from '../config.js';
import { contactUrlFor } from '../mcp/contact-url.js';
import { InflightBytes } from '../mcp/inflight-bytes.js';
import { createAuthorizationServer } from '../oauth/authorization-server.js';
import { createMcpAuthenticator } from '../oauth/mcp-authenticator.js';
import { parseOAuthConfig, type OAuthConfig } from '../oauth/oauth-config.js';
import type { RequestCounter } from '../rate-limit/request-counter.js';
import type { Store } from '../store/store.js';
import { bodySizeRefusal, DEFAULT_BODY_LIMIT_BYTES } from './body-size.js';
import { handleClientError } from './client-error.js';
import { registerAuthorizedRoutes } from './authorize.js';
import { allowCrossOrigin } from './cors.js';
import { handleError } from './errors.js';
import { hostRefusal } from './host-header.js';
import { InputError } from '../domain/errors.js';
import { refuseBeyondInflightBound } from './inflight-requests.js';
import { createMetrics, observeRequests, type Metrics } from './metrics.js';
import { createOAuthRateLimiters, NO_OAUTH_RATE_LIMITS, type OAuthRateLimits } from './oauth-rate-limit.js';
import { registerMetricsRoute, type MetricsSource } from './metrics-endpoint.js';
import { trackAllowedMethods } from './method-not-allowed.js';
import { openApiOptions } from './openapi-document.js';
import compression from './plugins/compression.js';
import { createRateLimiter, noRateLimiter } from './rate-limit.js';
import { echoRequestId, requestIdOf } from './request-id.js';
import { registerChangeRoutes } from './routes/changes.js';
import { registerContactRoutes } from './routes/contacts.js';
import { registerDocsRoutes } from './routes/docs.js';
import { registerHealthRoutes } from './routes/health.js';
import { registerMcpRoute } from './routes/mcp.js';
import { registerOAuthRoutes } from './routes/oauth.js';
import { registerOpenApiRoute } from './routes/openapi.js';
import { addSecurityHeaders } from './security-headers.js';
import { serviceKeyFrom } from './service-key.js';
import { closeSlowReaders, type SlowReaderClosure, type SlowReaderLimits } from './slow-readers.js';
import { ThrottledWarning } from '../throttled-warning.js';

const DAY_MS = 86_400_000;
const MIB = 1024 * 1024;

export interface AppDependencies {
  store: Store;
  authenticator: Authenticator;
  apiKeyPrefix: string;
  /** A pino logger, or false for none (tests). */
  logger?: FastifyBaseLogger | false;
  /** Prometheus metrics; the app makes its own when omitted. */
  metrics?: Metrics;
  /** What GET /metrics serves, when not this app's own registry (a cluster worker serves every worker's). */
  metricsSource?: MetricsSource;
  /** How long the change feed's tokens stay followable; default 30 days (CHANGES_RETENTION_DAYS). */
  changesRetentionDays?: number;
  /**
   * Requests per key per minute, the OAuth endpoints' limits per client address, and where they are counted; omitted
   * (or 0 per minute) = no rate limit.
   */
  rateLimit?: { perMinute: number; oauth?: OAuthRateLimits; counter: RequestCounter };
  http?: Partial<HttpOptions>;
  /** OAuth for /mcp (OAUTH_*); default: the embedded authorization server at http://localhost:3000. */
  oauth?: OAuthConfig;
  /** PUBLIC_URL and API_CONTACT, as the OpenAPI document shows them; default `/` and none. */
  openApi?: OpenApiConfig;
  /** CONTACT_URL_TEMPLATE: the contact links of the MCP search and fetch tools; default `<issuer>/contacts/<id>`. */
  contactUrlTemplate?: string | null;
}

/** The HTTP settings of the configuration (see src/config.ts); each defaults to the configuration's default. */
export interface HttpOptions {
  /** Longest a request may take, from receiving it to answering (503 after); default 10 s. */
  requestTimeoutMs: number;
  /** Which proxies' X-Forwarded-* headers to believe; default none. */
  trustProxy: TrustProxy;
  /** Origins allowed to call the API from a browser; default none (no CORS headers). */
  corsOrigins: readonly string[];
  /** Strict-Transport-Security max-age; default null (header not sent). */
  hstsMaxAgeSeconds: number | null;
  /** Bearer token that unlocks GET /metrics on this app; default null (no /metrics route). */
  metricsToken: string | null;
  /** What /mcp answers may take in memory at once (MCP_INFLIGHT_MB); default 8 MiB. */
  mcpInflightBytes: number;
  /** Requests begun and not finished past which a request gets 503 (MAX_INFLIGHT_REQUESTS); default 256. */
  maxInflightRequests: number;
  /** When a connection whose client stops reading is closed (WRITE_STALL_TIMEOUT_MS, WRITE_BACKLOG_MAX_KB). */
  slowReaders: SlowReaderLimits;
}

/** Builds the whole HTTP application without listening: the server and every test use this. */
export async function buildApp(deps: AppDependencies): Promise<FastifyInstance> {
  const http = deps.http ?? {};
  const requestTimeoutMs = http.requestTimeoutMs ?? DEFAULT_REQUEST_TIMEOUT_MS;
  const app = Fastify({
    loggerInstance: deps.logger || undefined,
    logger: deps.logger === false ? false : undefined,
    requestIdHeader: false,
    genReqId: requestIdOf,
    trustProxy: toFastifyTrustProxy(http.trustProxy ?? false),
    // handlerTimeout answers a slow request with a JSON 503; requestTimeout bounds a slow client's upload.
    handlerTimeout: requestTimeoutMs,
    bodyLimit: DEFAULT_BODY_LIMIT_BYTES,
    requestTimeout: requestTimeoutMs,
    // Node checks for requests past their timeout every 30 s by default, which would let a slow client
    // (slowloris) hold a connection up to 30 s longer than requestTimeout.
    // requireHostHeader off: Node would answer a request without Host with a bare 400; hostRefusal answers it in JSON.
    http: { connectionsCheckingInterval: Math.min(1_000, requestTimeoutMs), requireHostHeader: false },
    // Oversized headers (431), slow clients (408) and unparseable requests (400) answer `{ error }` JSON too.
    clientErrorHandler: handleClientError,
    // Requests that arrive on a kept-alive connection during shutdown are served, with Connection: close.
    return503OnClosing: false,
    // A path that is not valid percent-encoding (`/%`) fails in the router, before any hook: answered as `{ error }` too.
    frameworkErrors: (error, request, reply) => void handleError(error, request, reply),
  }).withTypeProvider<TypeBoxTypeProvider>();
  const metrics = deps.metrics ?? createMetrics({ poolStats: deps.store.poolStats?.bind(deps.store) });
  watchSlowReaders(app, http.slowReaders);

  const methodNotAllowed = trackAllowedMethods(app);
  app.setErrorHandler(handleError);
  app.setNotFoundHandler(methodNotAllowed);
  // These run first, so every response (404 and 405 included) carries their headers and is counted.
  echoRequestId(app);
  observeRequests(app, metrics);
  addSecurityHeaders(app, { hstsMaxAgeSeconds: http.hstsMaxAgeSeconds ?? null });
  await allowCrossOrigin(app, http.corsOrigins ?? []);
  app.addHook('onRequest', async (request, reply) => {
    reply.header('cache-control', 'no-store');
    const refusal = hostRefusal(request.raw);
    if (refusal !== null) throw new InputError(refusal);
    const tooLarge = bodySizeRefusal(request);
    if (tooLarge !== null) throw tooLarge;
    // Answer unknown paths and methods before any body is read, so a bad body can't turn a 405 into a 400.
    if (request.is404) methodNotAllowed(request, reply);
  });
  refuseBeyondInflightBound(app, http.maxInflightRequests ?? DEFAULT_MAX_INFLIGHT_REQUESTS);
  await app.register(compression);

  await app.register(
    swagger,
    openApiOptions({
      apiKeyPrefix: deps.apiKeyPrefix,
      publicUrl: deps.openApi?.publicUrl ?? DEFAULT_PUBLIC_URL,
      contact: deps.openApi?.contact ?? null,
      rateLimited: deps.rateLimit !== undefined && deps.rateLimit.perMinute > 0,
    }),
  );
  const rateLimiter = deps.rateLimit ? createRateLimiter({ ...deps.rateLimit, metrics }) : noRateLimiter;
  const serviceKey = serviceKeyFrom(deps.store.oauth);
  await registerAuthorizedRoutes(app, { authenticator: deps.authenticator, rateLimiter }, (api) => {
    registerContactRoutes(api, { contacts: deps.store.contacts, serviceKey });
    const retentionDays = deps.changesRetentionDays ?? DEFAULT_CHANGES_RETENTION_DAYS;
    registerChangeRoutes(api, { contacts: deps.store.contacts, retentionMs: retentionDays * DAY_MS, serviceKey });
  });
  const oauth = deps.oauth ?? parseOAuthConfig({}, listenUrlOf('127.0.0.1', DEFAULT_PORT));
  const authorizationServer =
    oauth.external === null
      ? createAuthorizationServer({
          config: oauth,
          store: deps.store.oauth,
          authenticator: deps.authenticator,
          warn: (message) => app.log.warn(message),
        })
      : null;
  const mcpAuthenticator = createMcpAuthenticator({
    config: oauth,
    keys: deps.authenticator,
    apiKeyPrefix: deps.apiKeyPrefix,
    authorizationServer,
    users: deps.store.users,
  });
  await registerAuthorizedRoutes(app, { authenticator: mcpAuthenticator, rateLimiter }, (api) => {
    registerMcpRoute(api, {
      contacts: deps.store.contacts,
      rateLimiter,
      allowed: { origins: http.corsOrigins ?? [], issuer: oauth.issuer },
      contactUrl: contactUrlFor(deps.contactUrlTemplate ?? null, oauth.issuer),
      inflight: new InflightBytes(http.mcpInflightBytes ?? DEFAULT_MCP_INFLIGHT_MB * MIB),
    });
  });
  const { oauth: oauthLimits, counter } = deps.rateLimit ?? {};
  await registerOAuthRoutes(app, {
    config: oauth,
    server: authorizationServer,
    keys: deps.authenticator,
    rateLimiters: oauthLimits && counter ? createOAuthRateLimiters(oauthLimits, counter, metrics) : NO_OAUTH_RATE_LIMITS,
  });
  registerHealthRoutes(app, { store: deps.store });
  registerOpenApiRoute(app);
  registerDocsRoutes(app);
  if (http.metricsToken) registerMetricsRoute(app, { registry: deps.metricsSource ?? metrics.registry, token: http.metricsToken });
  await app.ready();
  return app;
}

/** A flood of clients that stop reading closes thousands of connections a second: logging each would add to it. */
const SLOW_READER_WARNING_INTERVAL_MS = 10_000;

function watchSlowReaders(app: FastifyInstance, limits: SlowReaderLimits | undefined): void {
  const warnings = new Map<SlowReaderClosure, ThrottledWarning>();
  const stop = closeSlowReaders(
    app.server,
    limits ?? { stallTimeoutMs: DEFAULT_WRITE_STALL_TIMEOUT_MS, maxBacklogBytes: DEFAULT_WRITE_BACKLOG_MAX_KB * 1024 },
    (reason) => {
      if (!warnings.has(reason)) warnings.set(reason, new ThrottledWarning(SLOW_READER_WARNING_INTERVAL_MS));
      const closuresNotLogged = warnings.get(reason)!.occurred();
      if (closuresNotLogged !== null)
        app.log.warn({ reason, closuresNotLogged }, 'closed a connection whose client does not read its answers');
    },
  );
  app.addHook('onClose', async () => stop());
}

function toFastifyTrustProxy(trustProxy: TrustProxy): boolean | string[] {
  return typeof trustProxy === 'object' ? [...trustProxy] : trustProxy;
}
