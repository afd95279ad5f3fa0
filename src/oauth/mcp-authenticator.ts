import { createRemoteJWKSet, jwtVerify, type JWTPayload } from 'jose';
import {
  AuthError,
  extractBearerToken,
  INVALID_KEY_MESSAGE,
  PRO_PLAN_REQUIRED_MESSAGE,
  type Authenticator,
  type Principal,
} from '../auth/authenticator.js';
import { isWellFormedApiKey } from '../domain/api-key.js';
import { billingPlanAllowsApiAccess } from '../domain/billing-plan.js';
import { CONTACTS_READ, type Scope } from '../domain/scopes.js';
import type { UserStore } from '../store/store.js';
import type { EmbeddedAuthorizationServer } from './authorization-server.js';
import type { ExternalIssuerConfig, OAuthConfig } from '../config.js';
import { mcpResourceOf } from '../domain/mcp-resource.js';

/** Where /mcp's protected-resource metadata is (RFC 9728 §3.1: the well-known path, then the resource's path). */
export const PROTECTED_RESOURCE_METADATA_PATH = '/.well-known/oauth-protected-resource';

export interface McpAuthenticatorDependencies {
  config: OAuthConfig;
  /** API keys, and keys behind OAuth grants. */
  keys: Authenticator;
  apiKeyPrefix: string;
  /** The embedded authorization server, whose opaque access tokens this accepts; null when an external issuer is set. */
  authorizationServer: EmbeddedAuthorizationServer | null;
  users: UserStore;
}

/**
 * Who may call /mcp: an API key exactly as on the REST API, an access token of the embedded authorization server
 * (checked against the key its grant is bound to, on every request), or a JWT of the configured external issuer.
 * Every refusal carries the challenge that starts an OAuth client's discovery (MCP authorization, RFC 6750 §3).
 */
export function createMcpAuthenticator(deps: McpAuthenticatorDependencies): Pick<Authenticator, 'authenticate'> {
  const resource = mcpResourceOf(deps.config);
  const metadataUrl = `${deps.config.issuer}${PROTECTED_RESOURCE_METADATA_PATH}${new URL(resource).pathname}`;
  // RFC 6750 §3.1: a request that sent no Bearer credentials is told where to get some, with no error code.
  const challenge = (error: string | null) =>
    `Bearer ${error === null ? '' : `error="${error}", `}resource_metadata="${metadataUrl}", scope="${CONTACTS_READ}"`;
  const refuse = (error: AuthError, sentToken: boolean) =>
    new AuthError(
      error.status,
      error.message,
      error.reason,
      challenge(error.status === 403 ? 'insufficient_scope' : sentToken ? 'invalid_token' : null),
    );
  const external = deps.config.external === null ? null : externalTokens(deps.config.external, deps.users);

  const authenticate = async (authorization: string | undefined, scope: Scope): Promise<Principal> => {
    const token = extractBearerToken(authorization);
    if (token === null || isWellFormedApiKey(token, deps.apiKeyPrefix)) return deps.keys.authenticate(authorization, scope);
    if (external !== null) return external(token, scope);
    const accessToken =
      deps.authorizationServer === null ? undefined : await (await deps.authorizationServer.ready()).provider.AccessToken.find(token);
    if (!accessToken || accessToken.aud !== resource || accessToken.accountId === undefined) {
      throw new AuthError(401, INVALID_KEY_MESSAGE, 'unknown');
    }
    if (!(accessToken.scope ?? '').split(' ').includes(scope)) throw tokenLacks(scope);
    try {
      return await deps.keys.authenticateKeyId(accessToken.accountId, scope);
    } catch (error) {
      throw error instanceof AuthError && error.reason === 'scope' ? keyBehindTokenLacks(scope) : error;
    }
  };

  return {
    async authenticate(authorization, scope) {
      try {
        return await authenticate(authorization, scope);
      } catch (error) {
        throw error instanceof AuthError ? refuse(error, extractBearerToken(authorization) !== null) : error;
      }
    },
  };
}

/** A token caller has no API key in hand: the 403s it gets speak of its token ("API key lacks …" is for keys). */
const tokenLacks = (scope: Scope) => new AuthError(403, `Access token lacks ${scope}`, 'scope');
const keyBehindTokenLacks = (scope: Scope) => new AuthError(403, `The API key this access token was approved with lacks ${scope}`, 'scope');

/** JWT access tokens of another authorization server, checked against its keys, audience and scope. */
function externalTokens(config: ExternalIssuerConfig, users: UserStore) {
  const keys = createRemoteJWKSet(new URL(config.jwksUrl), { timeoutDuration: 2_000, cooldownDuration: 30_000 });
  return async (token: string, scope: Scope): Promise<Principal> => {
    let claims: JWTPayload;
    try {
      ({ payload: claims } = await jwtVerify(token, keys, { issuer: config.issuer, audience: config.audience }));
    } catch {
      throw new AuthError(401, INVALID_KEY_MESSAGE, 'unknown');
    }
    if (!scopesOf(claims).includes(scope)) throw tokenLacks(scope);
    const userRef = claims[config.userClaim];
    const user = typeof userRef === 'string' ? await users.find(userRef) : null;
    if (user === null) throw new AuthError(401, INVALID_KEY_MESSAGE, 'unknown');
    if (!billingPlanAllowsApiAccess(user.plan)) throw new AuthError(403, PRO_PLAN_REQUIRED_MESSAGE, 'plan');
    // No key stands behind such a token: its requests are rate-limited per user.
    return { ownerId: user.id, keyId: `user:${user.id}` };
  };
}

/** `scope` as RFC 9068 writes it (space-separated), or `scp` as an array (Okta, Azure AD). */
function scopesOf(claims: JWTPayload): string[] {
  if (typeof claims.scope === 'string') return claims.scope.split(' ');
  return Array.isArray(claims.scp) ? claims.scp.filter((entry): entry is string => typeof entry === 'string') : [];
}
