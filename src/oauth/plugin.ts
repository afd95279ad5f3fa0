import fp from 'fastify-plugin';
import type { Authenticator } from '../auth/authenticator.js';
import { createAuthorizationServer, type EmbeddedAuthorizationServer } from './authorization-server.js';
import type { OAuthConfig } from '../config.js';
import type { RequestCounter } from '../rate-limit/request-counter.js';
import type { OAuthStore } from '../store/store.js';
import { createOAuthRateLimiters, NO_OAUTH_RATE_LIMITS, type OAuthRateLimits } from './rate-limit.js';
import { registerOAuthRoutes } from './routes.js';

declare module 'fastify' {
  interface FastifyInstance {
    /** The embedded authorization server, whose access tokens /mcp accepts; null when an external issuer's are taken instead. */
    authorizationServer: EmbeddedAuthorizationServer | null;
  }
}

export interface OAuthPluginOptions {
  /** OAUTH_*. */
  config: OAuthConfig;
  /** Where the authorization server keeps its clients, grants and tokens. */
  store: OAuthStore;
  /** Checks the API key a user approves a client with. */
  authenticator: Authenticator;
  /** OAUTH_REGISTRATIONS_PER_MINUTE and OAUTH_AUTHORIZATIONS_PER_MINUTE, per client address. */
  limits: OAuthRateLimits;
  /** Where those requests are counted, with the API's; null when no limit is on. */
  counter: RequestCounter | null;
}

/**
 * OAuth for /mcp: the discovery documents and, unless OAUTH_EXTERNAL_ISSUER names another, the embedded authorization
 * server with its consent page and the rate limits of its endpoints that anyone may call (docs/oauth.md).
 */
export default fp<OAuthPluginOptions>(
  async (app, options) => {
    const { config, authenticator, counter } = options;
    const server =
      config.external === null
        ? createAuthorizationServer({ config, store: options.store, authenticator, warn: (message) => app.log.warn(message) })
        : null;
    app.decorate('authorizationServer', server);
    await registerOAuthRoutes(app, {
      config,
      server,
      keys: authenticator,
      rateLimiters: counter === null ? NO_OAUTH_RATE_LIMITS : createOAuthRateLimiters(options.limits, counter, app.metrics),
      limitAuthFailures: app.limitAuthFailures,
    });
  },
  { name: 'oauth', dependencies: ['metrics', 'rate-limit'], decorators: { fastify: ['metrics', 'limitAuthFailures'] } },
);
