import fp from 'fastify-plugin';
import type { Authenticator } from '../auth/authenticator.js';
import type { Store } from '../store/store.js';
import { registerAuthorizedRoutes } from '../web/authorize.js';
import type { PageCacheBudget } from './page-compression.js';
import type { ServiceKeySource } from '../web/service-key.js';
import { registerChangeRoutes } from './routes/changes.js';
import { registerContactRoutes } from './routes/contacts.js';
import { registerDocsRoutes } from './routes/docs.js';
import { registerHealthRoutes } from './routes/health.js';
import { registerOpenApiRoute } from './routes/openapi.js';

export interface RestApiPluginOptions {
  store: Pick<Store, 'contacts' | 'ping'>;
  /** API keys: every route that reads contacts takes one with `contacts:read`. */
  authenticator: Authenticator;
  serviceKey: ServiceKeySource;
  /** CHANGES_RETENTION_DAYS in ms: how old a change-feed cursor may be. */
  retentionMs: number;
  /** COMPRESSED_PAGE_CACHE_MB and PLAIN_PAGE_CACHE_MB in bytes: the listing pages a process keeps to send again. */
  pageCaches: PageCacheBudget;
}

/**
 * The REST API: the contact listing and change feed behind the authorization hook and rate limit, then the public
 * routes: the probes, the OpenAPI document and its reference page.
 */
export default fp<RestApiPluginOptions>(
  async (app, { store, authenticator, serviceKey, retentionMs, pageCaches }) => {
    const { rateLimiter, limitAuthFailures } = app;
    await registerAuthorizedRoutes(app, { authenticator, rateLimiter, limitAuthFailures }, (api) => {
      registerContactRoutes(api, { contacts: store.contacts, serviceKey, pageCaches });
      registerChangeRoutes(api, { contacts: store.contacts, retentionMs, serviceKey });
    });
    registerHealthRoutes(app, { store });
    registerOpenApiRoute(app);
    registerDocsRoutes(app);
  },
  { name: 'rest-api', dependencies: ['rate-limit'], decorators: { fastify: ['rateLimiter', 'limitAuthFailures'] } },
);
