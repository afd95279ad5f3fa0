import { createHash, randomBytes } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { FastifyInstance, LightMyRequestResponse } from 'fastify';
import { exportJWK, generateKeyPair, SignJWT, type JWK } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RATE_LIMIT_WINDOW_MS } from '../../src/domain/rate-limit.js';
import { loadConfig, type OAuthConfig } from '../../src/config.js';
import { createMemoryCounter } from '../../src/rate-limit/memory-counter.js';
import { hashIdentifier } from '../../src/oauth/store-adapter.js';
import { buildTestApp } from '../support/app.js';
import { describeEachBackend } from '../support/backends.js';
import { listenOnFreePort } from '../support/listen.js';
import { postMcp } from '../support/mcp-request.js';
import { startConnectionCounter } from '../support/oauth-client.js';
import { openOtherConnection } from '../support/other-connection.js';
import { listContacts } from '../support/requests.js';
import { createKey, createUser } from '../support/seed.js';

const ISSUER = 'https://contacts.example.com';
const RESOURCE = `${ISSUER}/mcp`;
const REDIRECT = 'http://127.0.0.1:9/callback';
const TOOLS_LIST = { jsonrpc: '2.0', id: 1, method: 'tools/list' };

const oauthConfig = (overrides: Partial<OAuthConfig> = {}): OAuthConfig => ({
  ...loadConfig({ OAUTH_ISSUER: ISSUER, OAUTH_PRODUCT_NAME: 'Acme CRM', OAUTH_ACCENT_COLOR: '#0a7d33' }).oauth,
  ...overrides,
});

const pkce = () => {
  const verifier = randomBytes(32).toString('base64url');
  return { verifier, challenge: createHash('sha256').update(verifier).digest('base64url') };
};

/** `name=value` pairs of a response's Set-Cookie headers, as a browser would send them back (paths ignored). */
const cookiesOf = (...responses: LightMyRequestResponse[]) =>
  responses.flatMap((response) => response.cookies.map(({ name, value }) => `${name}=${value}`)).join('; ');

/**
 * The embedded authorization server's protocol rules, in process (test/mcp/mcp-oauth.test.ts runs the whole flow with
 * the SDK's client and a browser): discovery, PKCE S256 only, exact redirect URIs, one resource, the consent page's
 * defences, hashed storage, SSRF guards on client metadata documents, and the external-issuer mode.
 */
describeEachBackend('embedded OAuth authorization server', (db) => {
  let app: FastifyInstance;
  let apiKey: string;
  let clientId: string;

  beforeAll(async () => {
    const { store } = db();
    const owner = await createUser(store);
    apiKey = (await createKey(store, owner.id)).key;
    app = await buildTestApp(store, { config: { oauth: oauthConfig() } });
    const registered = await app.inject({
      method: 'POST',
      url: '/oauth/register',
      payload: { client_name: 'Agent <b>Smith</b>', redirect_uris: [REDIRECT], token_endpoint_auth_method: 'none', scope: 'contacts:read' },
    });
    expect(registered.statusCode).toBe(201);
    clientId = registered.json().client_id;
  });
  afterAll(async () => {
    await app.close();
  });

  /** An authorization request; a parameter given as undefined is left out. */
  const authorize = (params: Record<string, string | undefined>) => {
    const all = {
      response_type: 'code',
      client_id: clientId,
      redirect_uri: REDIRECT,
      scope: 'contacts:read',
      resource: RESOURCE,
      ...params,
    };
    const query = new URLSearchParams(Object.entries(all).filter((entry): entry is [string, string] => entry[1] !== undefined));
    return app.inject({ method: 'GET', url: `/oauth/authorize?${query}` });
  };

  /** Starts an authorization with PKCE and opens its consent page, as a browser would. */
  async function consentPage(params: Record<string, string | undefined> = {}) {
    const { verifier, challenge } = pkce();
    const started = await authorize({ code_challenge: challenge, code_challenge_method: 'S256', state: 'xyz', ...params });
    expect(started.statusCode).toBe(303);
    const url = started.headers.location!;
    const cookie = cookiesOf(started);
    const page = await app.inject({ method: 'GET', url, headers: { cookie } });
    const csrf = /name="csrf" value="([^"]+)"/.exec(page.body)?.[1];
    return { verifier, url, cookie, page, csrf, started };
  }

  /** Approves on the consent page and follows the redirects to the client's redirect URI; returns its query. */
  async function approve(key = apiKey, params: Record<string, string | undefined> = {}) {
    const { verifier, url, cookie, csrf } = await consentPage(params);
    const posted = await app.inject({
      method: 'POST',
      url,
      headers: { cookie },
      payload: { csrf: csrf!, api_key: key, decision: 'approve' },
    });
    expect(posted.statusCode).toBe(303);
    const resumed = await app.inject({
      method: 'GET',
      url: posted.headers.location!,
      headers: { cookie: `${cookie}; ${cookiesOf(posted)}` },
    });
    expect(resumed.statusCode).toBe(303);
    return { query: new URL(resumed.headers.location!).searchParams, verifier };
  }

  /** Exchanges an approved authorization's code at the token endpoint. */
  async function exchange({ query, verifier }: Awaited<ReturnType<typeof approve>>, client = clientId) {
    const response = await app.inject({
      method: 'POST',
      url: '/oauth/token',
      payload: new URLSearchParams({
        grant_type: 'authorization_code',
        code: query.get('code')!,
        client_id: client,
        redirect_uri: REDIRECT,
        code_verifier: verifier,
      }).toString(),
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
    });
    expect(response.statusCode, response.body).toBe(200);
    return response.json() as { access_token: string; scope: string; token_type: string; id_token?: string };
  }

  describe('discovery', () => {
    it('serves protected-resource metadata (RFC 9728) for /mcp at the resource path and at the root, to any origin', async () => {
      for (const url of ['/.well-known/oauth-protected-resource/mcp', '/.well-known/oauth-protected-resource']) {
        const response = await app.inject({ method: 'GET', url });
        expect(response.statusCode, url).toBe(200);
        expect(response.headers['access-control-allow-origin']).toBe('*');
        expect(response.json()).toEqual({
          resource: RESOURCE,
          authorization_servers: [ISSUER],
          scopes_supported: ['contacts:read'],
          bearer_methods_supported: ['header'],
          resource_name: 'Acme CRM (MCP)',
          resource_documentation: `${ISSUER}/docs`,
        });
      }
    });

    it('serves the same authorization-server metadata at the RFC 8414 and OpenID paths: S256 only, DCR, revocation, metadata documents', async () => {
      const rfc8414 = await app.inject({ method: 'GET', url: '/.well-known/oauth-authorization-server' });
      const openid = await app.inject({ method: 'GET', url: '/.well-known/openid-configuration' });
      expect(rfc8414.statusCode).toBe(200);
      expect(rfc8414.json()).toEqual(openid.json());
      expect(rfc8414.json()).toMatchObject({
        issuer: ISSUER,
        authorization_endpoint: `${ISSUER}/oauth/authorize`,
        token_endpoint: `${ISSUER}/oauth/token`,
        registration_endpoint: `${ISSUER}/oauth/register`,
        revocation_endpoint: `${ISSUER}/oauth/revoke`,
        code_challenge_methods_supported: ['S256'],
        response_types_supported: ['code'],
        grant_types_supported: ['authorization_code', 'refresh_token'],
        client_id_metadata_document_supported: true,
        authorization_response_iss_parameter_supported: true,
      });
      expect(rfc8414.json().scopes_supported).toContain('contacts:read');
    });

    it('names Client ID Metadata Documents first, right after the issuer, ahead of dynamic registration (MCP 2026-07-28)', async () => {
      const keys = Object.keys((await app.inject({ method: 'GET', url: '/.well-known/oauth-authorization-server' })).json());
      expect(keys.slice(0, 2)).toEqual(['issuer', 'client_id_metadata_document_supported']);
      expect(keys.indexOf('client_id_metadata_document_supported')).toBeLessThan(keys.indexOf('registration_endpoint'));
    });

    it('advertises no DPoP: /mcp checks no proofs, so the server binds no token to a key (docs/oauth.md)', async () => {
      const metadata = (await app.inject({ method: 'GET', url: '/.well-known/oauth-authorization-server' })).json();
      expect(metadata).not.toHaveProperty('dpop_signing_alg_values_supported');
    });
  });

  describe('client registration', () => {
    const register = (metadata: Record<string, unknown>) =>
      app.inject({
        method: 'POST',
        url: '/oauth/register',
        payload: { redirect_uris: [REDIRECT], token_endpoint_auth_method: 'none', ...metadata },
      });
    const storedClients = async () => {
      const other = await openOtherConnection(db());
      try {
        return (await other.rows<{ n: number }>("SELECT COUNT(*) AS n FROM oauth_records WHERE kind = 'Client'"))[0]!.n;
      } finally {
        await other.close();
      }
    };

    it('accepts http redirect URIs on loopback only (OAuth 2.1): any other host is invalid_redirect_uri and nothing is stored', async () => {
      for (const uri of ['http://127.0.0.1:8080/cb', 'http://[::1]:8080/cb', 'http://localhost/cb', 'https://app.example/cb']) {
        expect((await register({ redirect_uris: [uri] })).statusCode, uri).toBe(201);
      }
      const before = await storedClients();
      for (const uri of ['http://evil.example/cb', 'http://10.0.0.1/cb', 'http://localhost.evil.example/cb']) {
        const refused = await register({ redirect_uris: [REDIRECT, uri] });
        expect(refused.statusCode, uri).toBe(400);
        expect(refused.json()).toEqual({
          error: 'invalid_redirect_uri',
          error_description: `redirect_uris may use http only on loopback (127.0.0.1, [::1] or localhost); use https for ${uri}`,
        });
      }
      expect(Number(await storedClients())).toBe(Number(before));
    });

    it('takes application_type as MCP 2026-07-28 asks clients to send it: native on loopback or its own scheme, web on https', async () => {
      const cases: [string, string[]][] = [
        ['native', ['http://127.0.0.1:33418/callback', 'http://localhost:33418/callback']],
        ['native', ['com.example.agent:/oauth/callback']],
        ['web', ['https://agent.example/callback']],
      ];
      for (const [applicationType, uris] of cases) {
        const registered = await register({ application_type: applicationType, redirect_uris: uris });
        expect(registered.statusCode, registered.body).toBe(201);
        expect(registered.json()).toMatchObject({ application_type: applicationType, redirect_uris: uris });
      }
      // Clients of earlier revisions send none: the OpenID default (web) still takes their loopback redirect URIs.
      const older = await register({ redirect_uris: ['http://127.0.0.1:33418/callback'] });
      expect(older.statusCode).toBe(201);
      expect(older.json().application_type).toBe('web');
    });

    it('refuses an application_type its redirect URIs contradict, or one that does not exist, storing nothing', async () => {
      const before = await storedClients();
      const refusals: [Record<string, unknown>, string][] = [
        [{ application_type: 'native', redirect_uris: ['https://127.0.0.1/callback'] }, 'invalid_redirect_uri'],
        [{ application_type: 'web', redirect_uris: ['com.example.agent:/oauth/callback'] }, 'invalid_redirect_uri'],
        [{ application_type: 'desktop' }, 'invalid_client_metadata'],
      ];
      for (const [metadata, error] of refusals) {
        const refused = await register(metadata);
        expect(refused.statusCode, JSON.stringify(metadata)).toBe(400);
        expect(refused.json()).toMatchObject({ error });
        expect(refused.json().error_description, JSON.stringify(metadata)).toBeTruthy();
      }
      expect(Number(await storedClients())).toBe(Number(before));
    });

    it('keeps a client a day until a user approves it, then as long as its grant (365 days)', async () => {
      const expiryOf = async (id: string) => {
        const other = await openOtherConnection(db());
        try {
          const rows = await other.rows<{ expires_at: unknown }>(
            "SELECT expires_at FROM oauth_records WHERE kind = 'Client' AND id_hash = ?",
            hashIdentifier(id),
          );
          return (new Date(rows[0]!.expires_at as string).getTime() - Date.now()) / 86_400_000;
        } finally {
          await other.close();
        }
      };
      const unapproved = (await register({ client_name: 'Never approved' })).json().client_id;
      expect(await expiryOf(unapproved)).toBeCloseTo(1, 2);
      await approve();
      expect(await expiryOf(clientId)).toBeCloseTo(365, 2);
    });

    it('caps client_name at 200 characters and the whole metadata at 4 KB, with invalid_client_metadata', async () => {
      expect((await register({ client_name: 'é'.repeat(200) })).statusCode).toBe(201);
      const before = await storedClients();
      const longName = await register({ client_name: 'x'.repeat(40_000) });
      expect(longName.statusCode).toBe(400);
      expect(longName.json()).toEqual({
        error: 'invalid_client_metadata',
        error_description: 'client_name must be at most 200 characters',
      });
      const manyUris = Array.from({ length: 150 }, (_, index) => `https://app.example/callback/${index}`);
      const large = await register({ redirect_uris: manyUris });
      expect(large.statusCode).toBe(400);
      expect(large.json()).toMatchObject({ error: 'invalid_client_metadata' });
      expect(large.json().error_description).toMatch(/^client metadata must be at most 4096 bytes of JSON; got \d+$/);
      expect(Number(await storedClients())).toBe(Number(before));
    });
  });

  describe('rate limits per client address', () => {
    let limited: FastifyInstance;
    beforeAll(async () => {
      limited = await buildTestApp(db().store, {
        config: { oauth: oauthConfig(), rateLimit: { oauthRegistrationsPerMinute: 2, oauthAuthorizationsPerMinute: 3 } },
        requestCounter: createMemoryCounter({ windowMs: RATE_LIMIT_WINDOW_MS }),
      });
    });
    afterAll(async () => {
      await limited.close();
    });
    const registerFrom = (remoteAddress: string, url = '/oauth/register') =>
      limited.inject({ method: 'POST', url, remoteAddress, payload: { redirect_uris: [REDIRECT], token_endpoint_auth_method: 'none' } });
    const expectRefused = (response: LightMyRequestResponse, policy: string) => {
      expect(response.statusCode).toBe(429);
      expect(response.json()).toEqual({ error: 'Rate limit exceeded' });
      expect(Number(response.headers['retry-after'])).toBeGreaterThan(0);
      expect(response.headers['ratelimit-policy']).toBe(policy);
    };

    it('refuses registrations over the limit with 429 and Retry-After, whatever the path’s case; another address has its own', async () => {
      expect((await registerFrom('192.0.2.1')).statusCode).toBe(201);
      expect((await registerFrom('192.0.2.1', '/oauth/Register/')).statusCode).toBe(201);
      expectRefused(await registerFrom('192.0.2.1'), '"oauth-registration";q=2;w=60');
      expect((await registerFrom('192.0.2.2')).statusCode).toBe(201);
      // An IPv6 host holds a /64: its addresses share one count.
      expect((await registerFrom('2001:db8:1:2::a')).statusCode).toBe(201);
      expect((await registerFrom('2001:db8:1:2::b')).statusCode).toBe(201);
      expectRefused(await registerFrom('2001:db8:1:2:ffff::c'), '"oauth-registration";q=2;w=60');
    });

    it('counts authorization requests and pushed ones against one limit', async () => {
      const remoteAddress = '192.0.2.9';
      const query = () =>
        new URLSearchParams({
          response_type: 'code',
          client_id: clientId,
          redirect_uri: REDIRECT,
          code_challenge: pkce().challenge,
          code_challenge_method: 'S256',
        });
      expect((await limited.inject({ method: 'GET', url: `/oauth/authorize?${query()}`, remoteAddress })).statusCode).toBe(303);
      expect((await limited.inject({ method: 'GET', url: `/oauth/Authorize/?${query()}`, remoteAddress })).statusCode).toBe(303);
      const pushed = await limited.inject({
        method: 'POST',
        url: '/oauth/par',
        remoteAddress,
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        payload: query().toString(),
      });
      expect(pushed.statusCode).toBe(201);
      expectRefused(
        await limited.inject({ method: 'GET', url: `/oauth/authorize?${query()}`, remoteAddress }),
        '"oauth-authorization";q=3;w=60',
      );
    });
  });

  describe('authorization requests', () => {
    it('requires PKCE with S256: none, or plain, is sent back as invalid_request', async () => {
      for (const params of [{}, { code_challenge: pkce().challenge, code_challenge_method: 'plain' }] as Record<string, string>[]) {
        const response = await authorize(params);
        expect(response.statusCode).toBe(303);
        const back = new URL(response.headers.location!);
        expect(`${back.origin}${back.pathname}`).toBe(REDIRECT);
        expect(back.searchParams.get('error')).toBe('invalid_request');
      }
    });

    it('matches the redirect URI exactly: any other is refused on a page of its own, never redirected to', async () => {
      for (const redirect of [`${REDIRECT}/`, `${REDIRECT}?x=1`, 'http://127.0.0.1:9/other', 'http://evil.example/callback']) {
        const response = await authorize({ redirect_uri: redirect, code_challenge: pkce().challenge, code_challenge_method: 'S256' });
        expect(response.statusCode, redirect).toBe(400);
        expect(response.headers.location).toBeUndefined();
        expect(response.body).toContain('This connection cannot be completed');
      }
    });

    it('a request that names no scope is given contacts:read, and its token opens /mcp', async () => {
      const approved = await approve(apiKey, { scope: undefined });
      expect(approved.query.get('error'), approved.query.toString()).toBeNull();
      const tokens = await exchange(approved);
      expect(tokens.scope).toBe('contacts:read');
      expect((await postMcp(app, tokens.access_token, TOOLS_LIST)).statusCode).toBe(200);
    });

    it('openid alone is given contacts:read too: an ID token, and an access token that opens /mcp', async () => {
      // Registered without a `scope`, so that it may ask for openid.
      const registered = await app.inject({
        method: 'POST',
        url: '/oauth/register',
        payload: { client_name: 'OpenID Agent', redirect_uris: [REDIRECT], token_endpoint_auth_method: 'none' },
      });
      const openidClient = registered.json().client_id as string;
      const tokens = await exchange(await approve(apiKey, { scope: 'openid', client_id: openidClient }), openidClient);
      expect(tokens.scope).toBe('contacts:read');
      expect(tokens.id_token).toBeTruthy();
      expect((await postMcp(app, tokens.access_token, TOOLS_LIST)).statusCode).toBe(200);
    });

    it('a scope we do not have is invalid_scope, sent back before any consent page', async () => {
      for (const scope of ['contacts:write', 'contacts:read admin', 'profile']) {
        const response = await authorize({ scope, code_challenge: pkce().challenge, code_challenge_method: 'S256', state: 's' });
        expect(response.statusCode, scope).toBe(303);
        const back = new URL(response.headers.location!);
        expect(`${back.origin}${back.pathname}`, scope).toBe(REDIRECT);
        expect(back.searchParams.get('error'), scope).toBe('invalid_scope');
        expect(back.searchParams.get('state')).toBe('s');
        expect(back.searchParams.get('iss')).toBe(ISSUER);
      }
    });

    it('issues tokens for /mcp only: another resource is invalid_target', async () => {
      const response = await authorize({
        resource: `${ISSUER}/api/v1/contacts`,
        code_challenge: pkce().challenge,
        code_challenge_method: 'S256',
      });
      expect(new URL(response.headers.location!).searchParams.get('error')).toBe('invalid_target');
    });
  });

  describe('the consent page', () => {
    it('is plain HTML without script, never framed, with a labelled key field; it names the client (escaped) and the redirect host', async () => {
      const { page } = await consentPage();
      expect(page.statusCode).toBe(200);
      expect(page.headers['content-type']).toBe('text/html; charset=utf-8');
      const policy = String(page.headers['content-security-policy']);
      expect(policy).toContain("frame-ancestors 'none'");
      expect(policy).toContain("default-src 'none'");
      expect(policy).not.toContain('script-src');
      expect(page.headers['x-frame-options']).toBe('DENY');
      expect(page.headers['cache-control']).toBe('no-store');
      expect(page.body).not.toMatch(/<script/i);
      expect(page.body).toContain('<label for="api_key">');
      expect(page.body).toMatch(/<input type="password" id="api_key" name="api_key"/);
      expect(page.body).toMatch(/<form method="post" action="\/oauth\/consent\/[\w-]+">/);
      expect(page.body).toContain('Agent &lt;b&gt;Smith&lt;/b&gt;');
      expect(page.body).toContain('<strong>127.0.0.1:9</strong>');
      expect(page.body).toContain('Acme CRM');
      expect(page.body).toContain('--accent:#0a7d33');
    });

    it('every answer it sends back to the client carries iss (RFC 9207): an approval, a denial and a refused request', async () => {
      const { query } = await approve();
      expect(query.get('iss')).toBe(ISSUER);
      const { url, cookie, csrf } = await consentPage();
      const denied = await app.inject({ method: 'POST', url, headers: { cookie }, payload: { csrf: csrf!, decision: 'deny' } });
      const back = await app.inject({
        method: 'GET',
        url: denied.headers.location!,
        headers: { cookie: `${cookie}; ${cookiesOf(denied)}` },
      });
      const deniedQuery = new URL(back.headers.location!).searchParams;
      expect(deniedQuery.get('error')).toBe('access_denied');
      expect(deniedQuery.get('iss')).toBe(ISSUER);
      const { challenge } = pkce();
      const refused = await authorize({ scope: 'contacts:write', code_challenge: challenge, code_challenge_method: 'S256' });
      const refusedQuery = new URL(refused.headers.location!).searchParams;
      expect(refusedQuery.get('error')).toBe('invalid_scope');
      expect(refusedQuery.get('iss')).toBe(ISSUER);
    });

    it('refuses a post without the page’s CSRF token, or without the browser’s interaction cookie, granting nothing', async () => {
      const { url, cookie, csrf } = await consentPage();
      const forged = await app.inject({
        method: 'POST',
        url,
        headers: { cookie },
        payload: { csrf: 'forged', api_key: apiKey, decision: 'approve' },
      });
      expect(forged.statusCode).toBe(403);
      const noCookie = await app.inject({ method: 'POST', url, payload: { csrf: csrf!, api_key: apiKey, decision: 'approve' } });
      expect(noCookie.statusCode).toBe(400);
      expect(noCookie.body).toContain('This page has expired');
      for (const response of [forged, noCookie]) expect(response.headers.location).toBeUndefined();
    });

    it('a key without the scope or the plan is refused on the page with the REST API’s words', async () => {
      const { store } = db();
      const free = await createUser(store, 'free');
      const cases = [
        [(await createKey(store, free.id)).key, 403, 'API access requires a Pro plan'],
        [(await createKey(store, (await createUser(store)).id, { scopes: [] })).key, 403, 'API key lacks contacts:read'],
        ['cnt_live_x', 401, 'Invalid or inactive API key'],
      ] as const;
      for (const [key, status, message] of cases) {
        const { url, cookie, csrf } = await consentPage();
        const response = await app.inject({
          method: 'POST',
          url,
          headers: { cookie },
          payload: { csrf: csrf!, api_key: key, decision: 'approve' },
        });
        expect(response.statusCode).toBe(status);
        expect(response.body).toContain(`<p class="error" role="alert" id="key-error">${message}</p>`);
      }
    });
  });

  describe('the consent page’s keys, counted against the address', () => {
    it('past AUTH_FAILURES_PER_MINUTE wrong keys, the page answers 429 with Retry-After, a right key too', async () => {
      // The helpers above drive `app`: for this test, an app whose limit is on (the shared one counts nothing).
      const shared = app;
      app = await buildTestApp(db().store, {
        config: { oauth: oauthConfig(), rateLimit: { authFailuresPerMinute: 2 } },
        requestCounter: createMemoryCounter({ windowMs: RATE_LIMIT_WINDOW_MS }),
      });
      try {
        const { url, cookie, csrf } = await consentPage();
        const post = (key: string) =>
          app.inject({ method: 'POST', url, headers: { cookie }, payload: { csrf: csrf!, api_key: key, decision: 'approve' } });
        expect((await post('cnt_live_x')).statusCode).toBe(401);
        expect((await post('cnt_live_y')).statusCode).toBe(401);
        const refused = await post(apiKey);
        expect(refused.statusCode).toBe(429);
        expect(refused.headers['retry-after']).toBe('60');
        expect(refused.body).toContain('<p class="error" role="alert" id="key-error">Too many failed authentications</p>');
        // The same address at the API's doors.
        expect((await listContacts(app, apiKey)).statusCode).toBe(429);
      } finally {
        await app.close();
        app = shared;
      }
    });
  });

  describe('tokens', () => {
    it('codes live 60 s and are stored hashed; tokens are opaque, stored hashed, and never in a stored payload', async () => {
      const { query, verifier } = await approve();
      expect(query.get('state')).toBe('xyz');
      expect(query.get('iss')).toBe(ISSUER);
      const code = query.get('code')!;
      const exchanged = await app.inject({
        method: 'POST',
        url: '/oauth/token',
        payload: new URLSearchParams({
          grant_type: 'authorization_code',
          code,
          client_id: clientId,
          redirect_uri: REDIRECT,
          code_verifier: verifier,
          resource: RESOURCE,
        }).toString(),
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
      });
      expect(exchanged.statusCode).toBe(200);
      const tokens = exchanged.json();
      expect(tokens).toMatchObject({ token_type: 'Bearer', expires_in: 3600, scope: 'contacts:read' });
      expect(tokens.access_token.split('.')).toHaveLength(1);
      const listed = await postMcp(app, tokens.access_token, TOOLS_LIST);
      expect(listed.statusCode).toBe(200);

      const other = await openOtherConnection(db());
      try {
        const rows = await other.rows<{ kind: string; id_hash: string; payload: string; expires_at: unknown }>(
          'SELECT kind, id_hash, payload, expires_at FROM oauth_records',
        );
        const stored = JSON.stringify(rows);
        for (const secret of [code, tokens.access_token, tokens.refresh_token]) expect(stored.includes(secret)).toBe(false);
        expect(rows.map((row) => row.kind)).toEqual(
          expect.arrayContaining(['AccessToken', 'AuthorizationCode', 'RefreshToken', 'Grant', 'Client']),
        );
      } finally {
        await other.close();
      }
    });

    it('a 403 to a token speaks of the token: here, the key its grant is bound to has lost contacts:read', async () => {
      const { store, backend } = db();
      const key = await createKey(store, (await createUser(store)).id);
      const tokens = await exchange(await approve(key.key));
      const other = await openOtherConnection(db());
      try {
        await other.run('UPDATE api_keys SET scopes = ? WHERE id = ?', backend === 'sqlite' ? '[]' : '{}', key.id);
      } finally {
        await other.close();
      }
      const response = await postMcp(app, tokens.access_token, TOOLS_LIST);
      expect(response.statusCode).toBe(403);
      expect(response.json()).toEqual({ error: 'The API key this access token was approved with lacks contacts:read' });
      expect(response.headers['www-authenticate']).toMatch(/^Bearer error="insufficient_scope", /);
    });

    it("binds a grant's records to its key: deleting the key's owner removes every one of them, and the token is refused", async () => {
      const { store } = db();
      const owner = await createUser(store);
      const key = await createKey(store, owner.id);
      const tokens = await exchange(await approve(key.key));
      const boundKinds = async () => {
        const other = await openOtherConnection(db());
        try {
          const rows = await other.rows<{ kind: string }>('SELECT kind FROM oauth_records WHERE account_id = ? ORDER BY kind', key.id);
          return [...new Set(rows.map((row) => row.kind))];
        } finally {
          await other.close();
        }
      };
      expect(await boundKinds()).toEqual(expect.arrayContaining(['AccessToken', 'AuthorizationCode', 'Grant', 'RefreshToken', 'Session']));
      expect(await store.users.delete(owner.id)).toBe(true);
      expect(await boundKinds()).toEqual([]);
      expect((await postMcp(app, tokens.access_token, TOOLS_LIST)).statusCode).toBe(401);
    });

    it('a token for the REST API is not a key: OAuth tokens open /mcp only', async () => {
      const { query, verifier } = await approve();
      const tokens = (
        await app.inject({
          method: 'POST',
          url: '/oauth/token',
          payload: new URLSearchParams({
            grant_type: 'authorization_code',
            code: query.get('code')!,
            client_id: clientId,
            redirect_uri: REDIRECT,
            code_verifier: verifier,
          }).toString(),
          headers: { 'content-type': 'application/x-www-form-urlencoded' },
        })
      ).json();
      const rest = await listContacts(app, tokens.access_token);
      expect(rest.statusCode).toBe(401);
    });

    it('binds a token to this issuer: an instance with another issuer on the same database refuses it', async () => {
      const tokens = await exchange(await approve());
      const elsewhere = await buildTestApp(db().store, {
        config: { oauth: oauthConfig({ issuer: 'https://contacts-staging.example.com' }) },
      });
      try {
        const refused = await postMcp(elsewhere, tokens.access_token, TOOLS_LIST);
        expect(refused.statusCode).toBe(401);
        expect(refused.headers['www-authenticate']).toMatch(/^Bearer error="invalid_token", /);
      } finally {
        await elsewhere.close();
      }
      expect((await postMcp(app, tokens.access_token, TOOLS_LIST)).statusCode).toBe(200);
    });

    it('a token the server never issued is a 401 that starts discovery', async () => {
      const response = await postMcp(app, 'not-a-token', TOOLS_LIST);
      expect(response.statusCode).toBe(401);
      expect(response.headers['www-authenticate']).toBe(
        `Bearer error="invalid_token", resource_metadata="${ISSUER}/.well-known/oauth-protected-resource/mcp", scope="contacts:read"`,
      );
      expect(response.json()).toEqual({ error: 'Invalid or inactive API key' });
    });
  });

  describe('client metadata documents', () => {
    it('are never connected to on loopback or private addresses unless configured for tests: the address is checked first', async () => {
      const listener = await startConnectionCounter();
      try {
        for (const host of ['127.0.0.1', 'localhost', '[::ffff:127.0.0.1]', '127.1']) {
          const response = await authorize({
            client_id: `https://${host}:${listener.port}/agent.json`,
            code_challenge: pkce().challenge,
            code_challenge_method: 'S256',
          });
          expect(response.statusCode, host).toBe(400);
          expect(response.body).toContain('invalid_client');
        }
        expect(listener.connections()).toBe(0);
      } finally {
        await listener.close();
      }
    });

    it('are fetched once for an authorization that fails, not again by its error handler', async () => {
      const listener = await startConnectionCounter();
      const testing = await buildTestApp(db().store, { config: { oauth: oauthConfig({ clientMetadataAllowPrivate: true }) } });
      try {
        const response = await testing.inject({
          method: 'GET',
          url: `/oauth/authorize?${new URLSearchParams({
            response_type: 'code',
            client_id: `https://127.0.0.1:${listener.port}/agent.json`,
            redirect_uri: REDIRECT,
            code_challenge: pkce().challenge,
            code_challenge_method: 'S256',
          })}`,
        });
        expect(response.statusCode).toBe(400);
        expect(response.body).toContain('invalid_client');
        expect(listener.connections()).toBe(1);
      } finally {
        await testing.close();
        await listener.close();
      }
    });

    it('must be https', async () => {
      const response = await authorize({
        client_id: 'http://agent.example/agent.json',
        code_challenge: pkce().challenge,
        code_challenge_method: 'S256',
      });
      expect(response.statusCode).toBe(400);
      expect(response.body).toContain('invalid_client');
    });
  });
});

describeEachBackend('/mcp with an external OAuth issuer', (db) => {
  let app: FastifyInstance;
  let jwksServer: Server;
  let sign: (claims: Record<string, unknown>, audience?: string) => Promise<string>;
  let proUserId: string;
  let freeUserId: string;
  const EXTERNAL = 'https://auth.example.com';

  beforeAll(async () => {
    const { store } = db();
    proUserId = (await createUser(store)).id;
    freeUserId = (await createUser(store, 'free')).id;
    const { privateKey, publicKey } = await generateKeyPair('ES256');
    const jwk: JWK = { ...(await exportJWK(publicKey)), kid: 'k1', alg: 'ES256', use: 'sig' };
    jwksServer = createServer((_request, response) =>
      response.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ keys: [jwk] })),
    );
    const { origin: jwksOrigin } = await listenOnFreePort(jwksServer);
    sign = (claims, audience = RESOURCE) =>
      new SignJWT(claims)
        .setProtectedHeader({ alg: 'ES256', kid: 'k1' })
        .setIssuer(EXTERNAL)
        .setAudience(audience)
        .setIssuedAt()
        .setExpirationTime('5m')
        .sign(privateKey);
    const jwksUrl = `${jwksOrigin}/jwks`;
    app = await buildTestApp(store, {
      config: { oauth: oauthConfig({ external: { issuer: EXTERNAL, jwksUrl, audience: RESOURCE, userClaim: 'sub' } }) },
    });
  });
  afterAll(async () => {
    await app.close();
    jwksServer.close();
  });

  const call = (token: string) => postMcp(app, token, TOOLS_LIST);

  it('points clients at the external issuer and serves no authorization server of its own', async () => {
    const metadata = (await app.inject({ method: 'GET', url: '/.well-known/oauth-protected-resource/mcp' })).json();
    expect(metadata.authorization_servers).toEqual([EXTERNAL]);
    expect((await app.inject({ method: 'GET', url: '/.well-known/oauth-authorization-server' })).statusCode).toBe(404);
    expect((await app.inject({ method: 'POST', url: '/oauth/register', payload: {} })).statusCode).toBe(404);
  });

  it('accepts its JWTs with the audience and scope, for the user the claim names', async () => {
    expect((await call(await sign({ sub: proUserId, scope: 'openid contacts:read' }))).statusCode).toBe(200);
    expect((await call(await sign({ sub: proUserId, scp: ['contacts:read'] }))).statusCode).toBe(200);
  });

  it('refuses a wrong audience, signature or user with 401, and a missing scope or a free plan with 403', async () => {
    expect((await call(await sign({ sub: proUserId, scope: 'contacts:read' }, 'https://other.example/mcp'))).statusCode).toBe(401);
    const token = await sign({ sub: proUserId, scope: 'contacts:read' });
    expect((await call(`${token.slice(0, -4)}AAAA`)).statusCode).toBe(401);
    expect((await call(await sign({ sub: '00000000-0000-4000-8000-000000000000', scope: 'contacts:read' }))).statusCode).toBe(401);
    const noScope = await call(await sign({ sub: proUserId, scope: 'openid' }));
    expect(noScope.statusCode).toBe(403);
    expect(noScope.headers['www-authenticate']).toContain('error="insufficient_scope"');
    expect(noScope.json()).toEqual({ error: 'Access token lacks contacts:read' });
    const free = await call(await sign({ sub: freeUserId, scope: 'contacts:read' }));
    expect(free.statusCode).toBe(403);
    expect(free.json()).toEqual({ error: 'API access requires a Pro plan' });
  });
});
