import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { Authenticator, Principal } from '../auth/authenticator.js';
import { CONTACTS_READ } from '../domain/scopes.js';
import type { LimitAuthFailures } from './auth-failure-limit.js';
import type { RateLimiter } from './rate-limit.js';

declare module 'fastify' {
  interface FastifyRequest {
    /** Who the request acts for: set by the authorization hook of the subtree it belongs to, null elsewhere. */
    principal: Principal | null;
  }
}

export interface AuthorizationDependencies {
  authenticator: Pick<Authenticator, 'authenticate'>;
  rateLimiter: RateLimiter;
  limitAuthFailures: LimitAuthFailures;
}

/**
 * Registers routes in a subtree whose one onRequest hook authenticates the Bearer key for `contacts:read` (unless the
 * client address is over its limit of failed authentications), then counts the request against the key's rate limit (so
 * 401 and 403 never spend quota), and sets `request.principal`. It runs before any body is read. Every route that reads
 * contacts is registered here, so none can forget the check.
 */
export async function registerAuthorizedRoutes(
  app: FastifyInstance,
  deps: AuthorizationDependencies,
  register: (api: FastifyInstance) => void,
): Promise<void> {
  await app.register(async (api) => {
    api.decorateRequest('principal', null);
    api.addHook('onRequest', async (request, reply) => {
      const principal = await deps.limitAuthFailures(request, () =>
        deps.authenticator.authenticate(request.headers.authorization, CONTACTS_READ),
      );
      request.principal = principal;
      await deps.rateLimiter.enforce(principal.keyId, reply);
    });
    register(api);
  });
}

/** The principal of a request served under registerAuthorizedRoutes. */
export function principalOf(request: FastifyRequest): Principal {
  if (request.principal === null) throw new Error(`${request.method} ${request.url} is served without the authorization hook`);
  return request.principal;
}
