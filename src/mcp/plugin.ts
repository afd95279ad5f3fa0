import fp from 'fastify-plugin';
import type { Authenticator } from '../auth/authenticator.js';
import { contactUrlFor } from './contact-url.js';
import { InflightBytes } from './inflight-bytes.js';
import { mcpMessageCounter } from './message-metrics.js';
import { createMcpAuthenticator } from '../oauth/mcp-authenticator.js';
import type { OAuthConfig } from '../config.js';
import type { Store } from '../store/store.js';
import { registerAuthorizedRoutes } from '../web/authorize.js';
import { registerMcpRoute } from './route.js';
import type { ServiceKeySource } from '../web/service-key.js';

export interface McpPluginOptions {
  store: Pick<Store, 'contacts' | 'users'>;
  /** API keys, as the REST API checks them. */
  authenticator: Authenticator;
  apiKeyPrefix: string;
  /** OAUTH_*: the issuer (the resource tokens are bound to, an Origin allowed) and any external issuer. */
  oauth: OAuthConfig;
  /** CORS_ORIGINS: the browser origins allowed to call /mcp besides the issuer's and loopback. */
  corsOrigins: readonly string[];
  /** CONTACT_URL_TEMPLATE, or null: each contact's link is then its URL under the issuer. */
  contactUrlTemplate: string | null;
  /** MCP_INFLIGHT_MB, in bytes: what the answers being built may take in this process at once. */
  inflightBytes: number;
  /** Signs list_changes' tokens (the REST change feed's) and resources/list's cursors. */
  serviceKey: ServiceKeySource;
  /** CHANGES_RETENTION_DAYS, in ms. */
  changesRetentionMs: number;
}

/**
 * The hosted MCP endpoint: POST /mcp in a subtree of its own whose authorization hook takes an API key, an access token
 * of the embedded authorization server (the oauth plugin's) or an external issuer's JWT, and spends the key's rate limit.
 */
export default fp<McpPluginOptions>(
  async (app, options) => {
    const { store, oauth } = options;
    const authenticator = createMcpAuthenticator({
      config: oauth,
      keys: options.authenticator,
      apiKeyPrefix: options.apiKeyPrefix,
      authorizationServer: app.authorizationServer,
      users: store.users,
    });
    const { rateLimiter, limitAuthFailures } = app;
    await registerAuthorizedRoutes(app, { authenticator, rateLimiter, limitAuthFailures }, (api) => {
      registerMcpRoute(api, {
        sources: {
          contacts: store.contacts,
          contactUrl: contactUrlFor(options.contactUrlTemplate, oauth.issuer),
          serviceKey: options.serviceKey,
          retentionMs: options.changesRetentionMs,
        },
        rateLimiter,
        allowed: { origins: options.corsOrigins, issuer: oauth.issuer },
        inflight: new InflightBytes(options.inflightBytes),
        countMessages: mcpMessageCounter(app.metrics.mcpMessages),
      });
    });
  },
  {
    name: 'mcp',
    dependencies: ['oauth', 'rate-limit', 'metrics'],
    decorators: { fastify: ['authorizationServer', 'rateLimiter', 'limitAuthFailures', 'metrics'] },
  },
);
