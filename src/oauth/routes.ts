import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { InteractionResults } from 'oidc-provider';
import type { Authenticator } from '../auth/authenticator.js';
import { AuthError } from '../auth/authenticator.js';
import { PublicError } from '../domain/errors.js';
import { CONTACTS_READ } from '../domain/scopes.js';
import { MCP_PATH, mcpResourceOf } from '../domain/mcp-resource.js';
import { OAUTH_ROUTES, seenAtIssuer, type EmbeddedAuthorizationServer } from './authorization-server.js';
import { consentContentSecurityPolicy, renderConsentPage, renderOAuthErrorPage } from './consent-page.js';
import { PROTECTED_RESOURCE_METADATA_PATH } from './mcp-authenticator.js';
import type { OAuthConfig } from '../config.js';
import type { LimitAuthFailures } from '../web/auth-failure-limit.js';
import { handOverResponse } from './hand-over.js';
import { limitOAuthRequests, type OAuthRateLimiters } from './rate-limit.js';

const OPENID_CONFIGURATION_PATH = '/.well-known/openid-configuration';
const AUTHORIZATION_SERVER_METADATA_PATH = '/.well-known/oauth-authorization-server';
/** The consent form holds a key and a token: a few hundred bytes. */
const CONSENT_BODY_LIMIT_BYTES = 4096;

export interface OAuthRouteDependencies {
  config: OAuthConfig;
  /** The embedded authorization server; null when tokens come from an external issuer. */
  server: EmbeddedAuthorizationServer | null;
  keys: Authenticator;
  /** Registrations and authorization requests per client address. */
  rateLimiters: OAuthRateLimiters;
  /** Failed authentications per client address: the consent form takes an API key as the API's doors do. */
  limitAuthFailures: LimitAuthFailures;
}

/**
 * Discovery for OAuth clients of /mcp (RFC 9728 protected-resource metadata, RFC 8414 authorization-server metadata),
 * and, unless an external issuer is configured, the embedded authorization server: oidc-provider's endpoints under
 * /oauth, and the consent page where a user approves a client with an API key.
 */
export async function registerOAuthRoutes(app: FastifyInstance, deps: OAuthRouteDependencies): Promise<void> {
  const { config, server } = deps;
  const metadata = {
    resource: mcpResourceOf(config),
    authorization_servers: [config.external?.issuer ?? config.issuer],
    scopes_supported: [CONTACTS_READ],
    bearer_methods_supported: ['header'],
    resource_name: `${config.consent.productName} (MCP)`,
    resource_documentation: `${config.issuer}/docs`,
  };
  // Both paths describe the one protected resource: clients try the resource's own path first, some only the root.
  for (const path of [`${PROTECTED_RESOURCE_METADATA_PATH}${MCP_PATH}`, PROTECTED_RESOURCE_METADATA_PATH]) {
    app.get(path, { schema: { hide: true } }, async (_request, reply) => reply.header('access-control-allow-origin', '*').send(metadata));
  }
  if (server === null) return;

  const contentSecurityPolicy = consentContentSecurityPolicy(config.consent);
  const toProvider = (path?: string) => async (request: FastifyRequest, reply: FastifyReply) => {
    const { handle } = await server.ready();
    handOverResponse(reply);
    if (path !== undefined) request.raw.url = path;
    seenAtIssuer(request.raw, config.issuer);
    await handle(request.raw, reply.raw);
  };

  await app.register(async (raw) => {
    // oidc-provider reads its own bodies (token, registration, revocation): leave them unread.
    raw.removeAllContentTypeParsers();
    raw.addContentTypeParser('*', (_request, _payload, done) => done(null));
    raw.addHook('onRequest', limitOAuthRequests(deps.rateLimiters));
    const routeOptions = { schema: { hide: true }, config: { contentSecurityPolicy, bodyReadByLibrary: true } };
    raw.all('/oauth/*', routeOptions, toProvider());
    raw.get(OPENID_CONFIGURATION_PATH, routeOptions, toProvider());
    // RFC 8414's path serves the same document as the OpenID one.
    raw.get(AUTHORIZATION_SERVER_METADATA_PATH, routeOptions, toProvider(OPENID_CONFIGURATION_PATH));
  });

  await app.register(async (consent) => {
    consent.addContentTypeParser(
      'application/x-www-form-urlencoded',
      { parseAs: 'string', bodyLimit: CONSENT_BODY_LIMIT_BYTES },
      (_request, body, done) => done(null, Object.fromEntries(new URLSearchParams(body as string))),
    );
    const routeOptions = { schema: { hide: true }, config: { contentSecurityPolicy } };
    consent.get(`${OAUTH_ROUTES.consent}/:uid`, routeOptions, async (request, reply) => {
      const view = await consentView(request, reply, null);
      if (view !== null) sendPage(reply, 200, renderConsentPage(config.consent, view));
    });
    consent.post(`${OAUTH_ROUTES.consent}/:uid`, routeOptions, async (request, reply) => {
      const form = (request.body ?? {}) as Record<string, string | undefined>;
      const authorization = await server.ready();
      const details = await interactionOf(request, reply);
      if (details === null) return;
      if (!authorization.isConsentToken(details.uid, form.csrf)) {
        return sendError(reply, 403, 'invalid_request', 'The form was not sent from this page. Go back to the app and start again.');
      }
      if (form.decision === 'deny') {
        return finish(request, reply, { error: 'access_denied', error_description: 'The user denied access' });
      }
      let keyId: string;
      try {
        ({ keyId } = await deps.limitAuthFailures(request, () =>
          deps.keys.authenticate(`Bearer ${(form.api_key ?? '').trim()}`, CONTACTS_READ),
        ));
      } catch (error) {
        // A key refused, or an address over its failed authentications (429): said on the page, which is for a person.
        if (!(error instanceof AuthError || (error instanceof PublicError && error.status === 429))) throw error;
        const view = await consentView(request, reply, error.message);
        if (view === null) return;
        if (!(error instanceof AuthError)) reply.headers(error.headers);
        sendPage(reply, error.status, renderConsentPage(config.consent, view));
        return;
      }
      const grantId = await authorization.approve(details, keyId);
      return finish(request, reply, { login: { accountId: keyId, remember: false }, consent: { grantId } });
    });
  });

  async function interactionOf(request: FastifyRequest, reply: FastifyReply) {
    const { provider } = await server!.ready();
    seenAtIssuer(request.raw, config.issuer);
    try {
      const details = await provider.interactionDetails(request.raw, reply.raw);
      if (details.uid === (request.params as { uid: string }).uid) return details;
    } catch {
      // No interaction cookie, or the interaction expired: the same page either way.
    }
    sendError(reply, 400, 'invalid_request', 'This page has expired or was opened outside the app you were connecting.');
    return null;
  }

  async function consentView(request: FastifyRequest, reply: FastifyReply, error: string | null) {
    const details = await interactionOf(request, reply);
    if (details === null) return null;
    const authorization = await server!.ready();
    const client = await authorization.provider.Client.find(String(details.params.client_id));
    const redirect = URL.parse(String(details.params.redirect_uri));
    return {
      clientName: client?.clientName ?? String(details.params.client_id),
      redirectHost: redirect === null ? String(details.params.redirect_uri) : redirect.host || redirect.protocol,
      action: `${OAUTH_ROUTES.consent}/${encodeURIComponent(details.uid)}`,
      csrfToken: authorization.consentToken(details.uid),
      error,
    };
  }

  async function finish(request: FastifyRequest, reply: FastifyReply, result: InteractionResults) {
    const { provider } = await server!.ready();
    handOverResponse(reply);
    await provider.interactionFinished(request.raw, reply.raw, result, { mergeWithLastSubmission: false });
  }

  function sendError(reply: FastifyReply, status: number, error: string, description: string) {
    sendPage(reply, status, renderOAuthErrorPage(config.consent, { error, error_description: description }));
  }
}

function sendPage(reply: FastifyReply, status: number, page: string): void {
  void reply.code(status).type('text/html; charset=utf-8').send(page);
}
