import type { IncomingMessage } from 'node:http';
import { createECDH, createHash, createHmac, timingSafeEqual } from 'node:crypto';
import type Provider from 'oidc-provider';
import type { Configuration, Interaction, KoaContextWithOIDC } from 'oidc-provider';
import type { Authenticator } from '../auth/authenticator.js';
import { AuthError } from '../auth/authenticator.js';
import { CONTACTS_READ } from '../domain/scopes.js';
import type { OAuthStore } from '../store/store.js';
import { clientMetadataProblem, registrationPreferenceFirst } from './client-metadata.js';
import { renderOAuthErrorPage } from './consent-page.js';
import { createOutgoingFetch } from './outgoing-fetch.js';
import type { OAuthConfig } from '../config.js';
import { mcpResourceOf } from '../domain/mcp-resource.js';
import { StoreAdapter } from './store-adapter.js';

/** Where the embedded authorization server's endpoints live, under the issuer. */
export const OAUTH_ROUTES = {
  authorization: '/oauth/authorize',
  token: '/oauth/token',
  registration: '/oauth/register',
  revocation: '/oauth/revoke',
  jwks: '/oauth/jwks',
  end_session: '/oauth/logout',
  pushed_authorization_request: '/oauth/par',
  consent: '/oauth/consent',
} as const;

/** RFC 9700 and the MCP authorization spec: codes are short-lived and single-use; access tokens live an hour. */
export const OAUTH_TTL_SECONDS = {
  AuthorizationCode: 60,
  AccessToken: 3600,
  RefreshToken: 30 * 86_400,
  Grant: 365 * 86_400,
  Interaction: 600,
  Session: 600,
  IdToken: 3600,
} as const;

export interface AuthorizationServerDependencies {
  config: OAuthConfig;
  store: OAuthStore;
  /** Checks the API key a grant is bound to, with the same rules (and cache bound) as a key sent as a Bearer. */
  authenticator: Authenticator;
  /** Where the library's own console warnings go instead (the service logs JSON lines). */
  warn: (message: string) => void;
}

/**
 * Loads oidc-provider only where it serves, turning the warnings it prints on import into log lines: on Node 20 it
 * warns that it prefers Node 22, and the suite runs every flow here on Node 20 (docs/oauth.md).
 */
async function loadOidcProvider(warn: (message: string) => void): Promise<typeof import('oidc-provider')> {
  const consoleWarn = console.warn;
  console.warn = (...parts: unknown[]) => warn(parts.join(' '));
  try {
    return await import('oidc-provider');
  } finally {
    console.warn = consoleWarn;
  }
}

/** Makes a request handed to the provider look as the issuer's URL says it was made (see `provider.proxy`). */
export function seenAtIssuer(request: IncomingMessage, issuer: string): void {
  const { host, protocol } = new URL(issuer);
  request.headers['x-forwarded-host'] = host;
  request.headers['x-forwarded-proto'] = protocol.slice(0, -1);
}

/**
 * The embedded authorization server, made on first use: building it reads its secrets from the database, and a server
 * starts (and answers /readyz 503) while the database is down. A failed attempt is made again at the next use.
 */
export interface EmbeddedAuthorizationServer {
  ready(): Promise<AuthorizationServer>;
}

/** oidc-provider, configured, and what the consent page needs besides. */
export interface AuthorizationServer {
  provider: Provider;
  /** The provider as a Node request handler. */
  handle: ReturnType<Provider['callback']>;
  /** The consent form's CSRF token for an interaction. */
  consentToken(uid: string): string;
  /** Whether a submitted CSRF token is the interaction's (constant time). */
  isConsentToken(uid: string, token: unknown): boolean;
  /** Records the user's approval of an interaction's request as a grant bound to the key; returns the grant's id. */
  approve(interaction: Interaction, keyId: string): Promise<string>;
}

/**
 * The scopes a request may name. contacts:read is the resource's, and listed here too because clients register it
 * (RFC 7591 `scope`), which the server checks against this list; a grant then holds it both ways.
 */
const SERVER_SCOPES = ['openid', 'offline_access', CONTACTS_READ];

/**
 * The embedded OAuth 2.1 authorization server: panva's oidc-provider (OpenID Certified), configured for one protected
 * resource (`/mcp`) and one scope. Users log in by entering a personal API key on the consent page, and the grant is
 * bound to that key: every token issued under it is checked against the key whenever it is used (docs/oauth.md).
 */
export function createAuthorizationServer(deps: AuthorizationServerDependencies): EmbeddedAuthorizationServer {
  let loading: Promise<AuthorizationServer> | null = null;
  return {
    ready: () => {
      loading ??= buildAuthorizationServer(deps).catch((error: unknown) => {
        loading = null;
        throw error;
      });
      return loading;
    },
  };
}

async function buildAuthorizationServer(deps: AuthorizationServerDependencies): Promise<AuthorizationServer> {
  const { config, store, authenticator } = deps;
  const [cookieKey, csrfKey, signingSeed] = await Promise.all([
    store.secret('cookie-key'),
    store.secret('csrf-key'),
    store.secret('signing-seed'),
  ]);
  const { default: Provider, errors } = await loadOidcProvider(deps.warn);
  const resource = mcpResourceOf(config);

  const configuration: Configuration = {
    adapter: (kind: string) => new StoreAdapter(kind, store),
    cookies: { keys: [cookieKey] },
    jwks: { keys: [signingJwkFrom(signingSeed)] },
    scopes: SERVER_SCOPES,
    claims: { openid: ['sub'] },
    extraClientMetadata: {
      // Listed so that the validator runs on every client: at registration, when a stored one is loaded, and for a
      // metadata document.
      properties: ['client_name'],
      validator: (_ctx, key, _value, metadata) => {
        const problem = key === 'client_name' ? clientMetadataProblem(metadata) : null;
        if (problem !== null) throw new errors.InvalidClientMetadata(problem);
      },
    },
    responseTypes: ['code'],
    clientDefaults: {
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
      token_endpoint_auth_method: 'none',
      id_token_signed_response_alg: 'ES256',
    },
    pkce: { required: () => true },
    routes: {
      authorization: OAUTH_ROUTES.authorization,
      token: OAUTH_ROUTES.token,
      registration: OAUTH_ROUTES.registration,
      revocation: OAUTH_ROUTES.revocation,
      jwks: OAUTH_ROUTES.jwks,
      end_session: OAUTH_ROUTES.end_session,
      pushed_authorization_request: OAUTH_ROUTES.pushed_authorization_request,
    },
    ttl: { ...OAUTH_TTL_SECONDS },
    rotateRefreshToken: true,
    issueRefreshToken: async (_ctx, client) => client.grantTypeAllowed('refresh_token'),
    // Tokens are bound to the API key, not to the browser that approved them.
    expiresWithSession: async () => false,
    // Only the grant the consent page just made counts: every authorization asks for a key again, so no earlier
    // approval in the same browser is reused.
    loadExistingGrant: async (ctx) => {
      const grantId = ctx.oidc.result?.consent?.grantId;
      return grantId === undefined ? undefined : ctx.oidc.provider.Grant.find(grantId);
    },
    interactions: { url: async (_ctx, interaction) => `${OAUTH_ROUTES.consent}/${interaction.uid}` },
    findAccount: async (_ctx, keyId) => {
      try {
        await authenticator.authenticateKeyId(keyId, CONTACTS_READ);
      } catch (error) {
        if (error instanceof AuthError) return undefined;
        throw error;
      }
      return { accountId: keyId, claims: async () => ({ sub: keyId }) };
    },
    // A browser-based client may call the token endpoint from the origin of one of its redirect URIs.
    clientBasedCORS: (_ctx, origin, client) => origin !== 'null' && client.redirectUris!.some((uri) => URL.parse(uri)?.origin === origin),
    renderError: async (ctx, out) => {
      ctx.type = 'html';
      ctx.body = renderOAuthErrorPage(config.consent, out);
    },
    features: {
      devInteractions: { enabled: false },
      // No RFC 7592 management, so no registration access token: a registration is one stored row.
      registration: { enabled: true, issueRegistrationAccessToken: false },
      // A client revokes its own tokens only (RFC 7009 §2.1); another's is answered as if revoked, changing nothing.
      revocation: { enabled: true, allowedPolicy: async (_ctx, client, token) => token.clientId === client.clientId },
      rpInitiatedLogout: { enabled: false },
      userinfo: { enabled: false },
      resourceIndicators: {
        enabled: true,
        defaultResource: async () => resource,
        useGrantedResource: async () => true,
        getResourceServerInfo: async (_ctx: KoaContextWithOIDC, indicator: string) => {
          if (indicator !== resource) throw new errors.InvalidTarget(`the only resource here is ${resource}`);
          return { scope: CONTACTS_READ, audience: resource, accessTokenTTL: OAUTH_TTL_SECONDS.AccessToken, accessTokenFormat: 'opaque' };
        },
      },
      clientIdMetadataDocument: { enabled: true, ack: 'draft-02', allowFetch: firstFetchInRequest() },
      // oidc-provider checks DPoP proofs on its own endpoints only, and /mcp is not one of them: a DPoP-bound token
      // would be accepted there as a plain Bearer. Off, no client is told to send proofs (docs/oauth.md).
      dPoP: { enabled: false },
    },
    // oidc-provider's hook for checking an authorization request's parameters, run before the consent page.
    extraParams: { scope: requestedScopeCheck(errors.InvalidScope) },
    fetch: createOutgoingFetch({ allowPrivate: config.clientMetadataAllowPrivate }),
  };
  const provider = new Provider(config.issuer, configuration);
  // The provider builds its endpoints' URLs (and decides on secure cookies) from the request's host and protocol:
  // it is told the issuer's (seenAtIssuer), whatever Host or proxy the request came through.
  provider.proxy = true;
  provider.use(async (ctx, next) => {
    await next();
    if (ctx.oidc?.route === 'discovery' && ctx.status === 200) ctx.body = registrationPreferenceFirst(ctx.body as Record<string, unknown>);
  });
  const consentToken = (uid: string) => createHmac('sha256', csrfKey).update(uid).digest('base64url');
  return {
    provider,
    handle: provider.callback(),
    consentToken,
    isConsentToken: (uid, token) => {
      const expected = Buffer.from(consentToken(uid));
      return typeof token === 'string' && Buffer.byteLength(token) === expected.length && timingSafeEqual(Buffer.from(token), expected);
    },
    // The consent page says "read your contacts": that is what is granted, and every request names it
    // (requestedScopeCheck), so every token carries it. A client a user approved is kept as long as the grant it gets;
    // a metadata document's client has no record.
    approve: async (interaction, keyId) => {
      const clientId = String(interaction.params.client_id);
      await new StoreAdapter('Client', store).keep(clientId, OAUTH_TTL_SECONDS.Grant);
      const grant = new provider.Grant({ accountId: keyId, clientId });
      const requested = String(interaction.params.scope ?? '').split(' ');
      const serverScopes = requested.filter((scope) => SERVER_SCOPES.includes(scope));
      if (serverScopes.length > 0) grant.addOIDCScope(serverScopes.join(' '));
      grant.addResourceScope(resource, CONTACTS_READ);
      return grant.save();
    },
  };
}

type OidcErrors = (typeof import('oidc-provider'))['errors'];

/**
 * Scopes we don't have are refused before the consent page (`invalid_scope`). A request that names no contacts scope
 * (none at all, or `openid` alone) is given contacts:read, the one thing a token here is for (docs/oauth.md).
 */
function requestedScopeCheck(InvalidScope: OidcErrors['InvalidScope']) {
  return (ctx: KoaContextWithOIDC, value: unknown): void => {
    const requested = typeof value === 'string' ? value.split(' ').filter((scope) => scope !== '') : [];
    const unknown = requested.find((scope) => !SERVER_SCOPES.includes(scope));
    if (unknown !== undefined) throw new InvalidScope(`the scopes here are ${SERVER_SCOPES.join(', ')}`, unknown);
    if (!requested.includes(CONTACTS_READ)) ctx.oidc.params!.scope = [...requested, CONTACTS_READ].join(' ');
  };
}

/**
 * Lets a request fetch a client's metadata document once. When it cannot be had, the authorization endpoint's error
 * handler looks the client up again, which fetched it a second time: twice the 2.5 s timeout for one request.
 */
function firstFetchInRequest(): (ctx: KoaContextWithOIDC | undefined, clientId: string) => Promise<boolean> {
  const fetched = new WeakMap<object, Set<string>>();
  return async (ctx, clientId) => {
    if (ctx === undefined) return true;
    const ids = fetched.get(ctx) ?? new Set<string>();
    fetched.set(ctx, ids);
    if (ids.has(clientId)) return false;
    ids.add(clientId);
    return true;
  };
}

/**
 * The P-256 key ID tokens are signed with (only a client asking for `openid` gets one), derived from the stored seed so
 * that every process has the same one without writing it.
 */
function signingJwkFrom(seed: string): Record<string, string> {
  const d = createHmac('sha256', seed).update('ES256 signing key').digest();
  const ecdh = createECDH('prime256v1');
  ecdh.setPrivateKey(d);
  const point = ecdh.getPublicKey();
  const x = point.subarray(1, 33).toString('base64url');
  const y = point.subarray(33).toString('base64url');
  const kid = createHash('sha256').update(point).digest('base64url').slice(0, 16);
  return { kty: 'EC', crv: 'P-256', d: d.toString('base64url'), x, y, use: 'sig', alg: 'ES256', kid };
}
