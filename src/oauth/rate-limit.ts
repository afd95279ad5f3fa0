import type { FastifyRequest, onRequestAsyncHookHandler } from 'fastify';
import { OAUTH_ROUTES } from './authorization-server.js';
import type { RequestCounter } from '../rate-limit/request-counter.js';
import { clientAddressKey } from '../web/client-address.js';
import type { Metrics } from '../metrics/metrics.js';
import { createRateLimiter, noRateLimiter, type RateLimiter } from '../web/rate-limit.js';

/** Requests per client address per minute at the authorization server's endpoints that anyone may call; 0 = no limit. */
export interface OAuthRateLimits {
  registrationsPerMinute: number;
  authorizationsPerMinute: number;
}

/** The endpoints that store a row for anyone who asks: a registered client; an interaction or a pushed request. */
type LimitedEndpoint = 'registration' | 'authorization';

export type OAuthRateLimiters = Record<LimitedEndpoint, RateLimiter>;

export const NO_OAUTH_RATE_LIMITS: OAuthRateLimiters = { registration: noRateLimiter, authorization: noRateLimiter };

/** One limiter per endpoint, counted with the API's counter (memory, the cluster's primary, or Redis) under keys of its own. */
export function createOAuthRateLimiters(limits: OAuthRateLimits, counter: RequestCounter, metrics: Metrics): OAuthRateLimiters {
  return {
    registration: createRateLimiter({ perMinute: limits.registrationsPerMinute, counter, metrics, policy: 'oauth-registration' }),
    authorization: createRateLimiter({ perMinute: limits.authorizationsPerMinute, counter, metrics, policy: 'oauth-authorization' }),
  };
}

/** Counts a request to a limited endpoint against its client's address, before oidc-provider reads or stores anything. */
export function limitOAuthRequests(limiters: OAuthRateLimiters): onRequestAsyncHookHandler {
  return async (request, reply) => {
    const endpoint = limitedEndpointOf(request);
    if (endpoint !== null) await limiters[endpoint].enforce(`${endpoint}:${clientAddressKey(request.ip)}`, reply);
  };
}

/** oidc-provider's router matches paths without regard to case and with one trailing slash: so does this. */
function limitedEndpointOf(request: FastifyRequest): LimitedEndpoint | null {
  const path = request.url
    .split('?', 1)[0]!
    .toLowerCase()
    .replace(/(.)\/$/, '$1');
  if (path === OAUTH_ROUTES.registration) return request.method === 'POST' ? 'registration' : null;
  if (path === OAUTH_ROUTES.authorization || path === OAUTH_ROUTES.pushed_authorization_request) return 'authorization';
  return null;
}
