import Fastify, { type FastifyBaseLogger, type FastifyInstance } from 'fastify';
import swagger from '@fastify/swagger';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { AdminConfig, Config, WebhooksConfig } from '../config.js';
import type { Metrics } from '../metrics/metrics.js';
import answerTimeout from '../web/plugins/answer-timeout.js';
import bodyReadTimeout from '../web/plugins/body-read-timeout.js';
import errors from '../web/plugins/errors.js';
import metrics from '../metrics/plugin.js';
import requestGuards from '../web/plugins/request-guards.js';
import requestId from '../web/plugins/request-id.js';
import securityHeaders from '../web/plugins/security-headers.js';
import { jsonServerOptions } from '../web/server-options.js';
import type { Store } from '../store/store.js';
import { adminOpenApiOptions } from './openapi-document.js';
import adminAuth from './plugins/admin-auth.js';
import callLog from './plugins/call-log.js';
import idempotency from './plugins/idempotency.js';
import jsonBody from './plugins/json-body.js';
import { adminContactRoutes } from './routes/contacts.js';
import { adminKeyRoutes } from './routes/keys.js';
import { adminOpenApiRoute } from './routes/openapi.js';
import { adminUserRoutes } from './routes/users.js';
import { adminWebhookRoutes } from './routes/webhooks.js';
import { validationError } from './validation-errors.js';
import { DAY_MS } from '../domain/duration.js';

/** How long a request waits for another with its Idempotency-Key to finish, at most: half the request timeout else. */
const MAX_IN_PROGRESS_WAIT_MS = 5_000;

/** Where every admin operation lives. */
export const ADMIN_PREFIX = '/admin/v1';

/**
 * The settings the admin app reads (src/config.ts parses them): the admin API's own, the request bounds, and what
 * webhook endpoints are checked against (their URLs, and times within the change log's retention).
 */
export interface AdminAppConfig extends Pick<
  Config,
  'apiKeyPrefix' | 'requestTimeoutMs' | 'bodyReadTimeoutMs' | 'maxInflightRequests' | 'hstsMaxAgeSeconds' | 'changesRetentionDays'
> {
  /** ADMIN_TOKEN, which every request must carry, and ADMIN_BODY_LIMIT_MB. */
  readonly admin: Pick<AdminConfig, 'bodyLimitMb' | 'importMaxRecords'> & { readonly token: string };
  /** WEBHOOKS_ALLOW_PRIVATE_URLS. */
  readonly webhooks: Pick<WebhooksConfig, 'allowPrivateUrls'>;
}

export interface AdminAppDependencies {
  config: AdminAppConfig;
  store: Store;
  /** A pino logger, or false for none (tests). */
  logger: FastifyBaseLogger | false;
  /** The Prometheus metrics the public app counts into: admin calls are counted by their own routes. */
  metrics: Metrics;
}

/**
 * Builds the admin API (docs/admin-api.md) without listening: its own Fastify instance, for its own address, composed
 * from the public app's plugins that fit an internal JSON API (errors, request ids, metrics, security headers, request
 * guards) and its own: the admin token, JSON bodies, Idempotency-Keys and one log line per call. Its routes call
 * src/operations only.
 */
export async function buildAdminApp(deps: AdminAppDependencies): Promise<FastifyInstance> {
  const { config, store } = deps;
  const { requestTimeoutMs } = config;
  const app = Fastify({
    // call-log writes one line per call instead.
    ...jsonServerOptions({ logger: deps.logger, requestTimeoutMs, requestLines: false }),
    // No HEAD twins of the GET routes: the document lists every operation there is.
    exposeHeadRoutes: false,
    // An unknown field is a 400 naming it (never dropped unseen), and a string is never taken for a number.
    ajv: { customOptions: { removeAdditional: false, coerceTypes: false } },
    schemaErrorFormatter: validationError,
  }).withTypeProvider<TypeBoxTypeProvider>();
  await app.register(errors);
  await app.register(answerTimeout, { timeoutMs: requestTimeoutMs });
  await app.register(bodyReadTimeout, { timeoutMs: config.bodyReadTimeoutMs });
  await app.register(requestId);
  await app.register(metrics, { metrics: deps.metrics });
  await app.register(securityHeaders, { hstsMaxAgeSeconds: config.hstsMaxAgeSeconds });
  await app.register(requestGuards, { maxInflightRequests: config.maxInflightRequests });
  await app.register(callLog);
  await app.register(adminAuth, { token: config.admin.token });
  await app.register(jsonBody);
  await app.register(idempotency, {
    store,
    staleClaimMs: 2 * requestTimeoutMs,
    inProgressWaitMs: Math.min(MAX_IN_PROGRESS_WAIT_MS, requestTimeoutMs / 2),
  });
  await app.register(swagger, adminOpenApiOptions({ apiKeyPrefix: config.apiKeyPrefix }));

  await app.register(
    async (admin) => {
      await admin.register(adminUserRoutes, { store });
      await admin.register(adminKeyRoutes, { store, apiKeyPrefix: config.apiKeyPrefix });
      await admin.register(adminContactRoutes, {
        store,
        bodyLimitBytes: config.admin.bodyLimitMb * 1024 * 1024,
        maxRecords: config.admin.importMaxRecords,
      });
      await admin.register(adminWebhookRoutes, {
        store,
        policy: { allowPrivate: config.webhooks.allowPrivateUrls, retentionMs: config.changesRetentionDays * DAY_MS },
      });
      await admin.register(adminOpenApiRoute);
    },
    { prefix: ADMIN_PREFIX },
  );
  await app.ready();
  return app;
}
