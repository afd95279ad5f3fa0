import { execFileSync } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync } from 'node:fs';
import { createServer as createHttpServer, type Server } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import { createServer as createNetServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { OAuthClientProvider } from '@modelcontextprotocol/sdk/client/auth.js';
import type { OAuthClientInformationMixed, OAuthClientMetadata, OAuthTokens } from '@modelcontextprotocol/sdk/shared/auth.js';
import { listenOnFreePort } from './listen.js';

/** An MCP client's OAuth state, in memory: what a desktop or web agent keeps between runs. */
export class TestOAuthClient implements OAuthClientProvider {
  clientInfo: OAuthClientInformationMixed | undefined;
  saved: OAuthTokens | undefined;
  authorizationUrl: URL | undefined;
  private verifier = '';

  constructor(
    readonly redirectUrl: string,
    readonly clientMetadataUrl?: string,
    private readonly name = 'Test Agent',
  ) {}

  get clientMetadata(): OAuthClientMetadata {
    return {
      client_name: this.name,
      redirect_uris: [this.redirectUrl],
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
      token_endpoint_auth_method: 'none',
    };
  }
  clientInformation() {
    return this.clientInfo;
  }
  saveClientInformation(info: OAuthClientInformationMixed) {
    this.clientInfo = info;
  }
  tokens() {
    return this.saved;
  }
  saveTokens(tokens: OAuthTokens) {
    this.saved = tokens;
  }
  redirectToAuthorization(url: URL) {
    this.authorizationUrl = url;
  }
  saveCodeVerifier(verifier: string) {
    this.verifier = verifier;
  }
  codeVerifier() {
    return this.verifier;
  }
}

/** A redirect URI on loopback, as native agents use: resolves each authorization's query (code or error). */
export async function startRedirectReceiver(): Promise<{ url: string; next: () => Promise<URLSearchParams>; close: () => Promise<void> }> {
  let waiting: ((query: URLSearchParams) => void) | null = null;
  const server = createHttpServer((request, response) => {
    const query = new URL(request.url ?? '/', 'http://127.0.0.1').searchParams;
    response.writeHead(200, { 'content-type': 'text/plain' }).end('You can close this window.');
    waiting?.(query);
    waiting = null;
  });
  const { origin } = await listenOnFreePort(server);
  return {
    url: `${origin}/callback`,
    next: () => new Promise((resolve) => (waiting = resolve)),
    close: () => closeServer(server),
  };
}

/** A public client's Client ID Metadata Document, as an agent would publish it at `clientId`. */
export function clientMetadataDocument(clientId: string, redirectUri: string) {
  return {
    client_id: clientId,
    client_name: 'Metadata Document Agent',
    redirect_uris: [redirectUri],
    grant_types: ['authorization_code', 'refresh_token'],
    response_types: ['code'],
    token_endpoint_auth_method: 'none',
  };
}

/**
 * An https server on 127.0.0.1 with a certificate made for it (Debian's openssl), serving JSON documents by path:
 * where a client publishes its Client ID Metadata Document. `certificate` is the file NODE_EXTRA_CA_CERTS takes.
 */
export async function startDocumentServer(documents: Map<string, () => unknown>, status = 200) {
  const dir = mkdtempSync(join(tmpdir(), 'contacts-api-cimd-'));
  const [key, cert] = [join(dir, 'key.pem'), join(dir, 'cert.pem')];
  execFileSync('openssl', [
    'req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-days', '1',
    '-keyout', key, '-out', cert, '-subj', '/CN=127.0.0.1', '-addext', 'subjectAltName=IP:127.0.0.1',
  ], { stdio: 'ignore' }); // prettier-ignore
  const fetched: string[] = [];
  const server = createHttpsServer({ key: readFileSync(key), cert: readFileSync(cert) }, (request, response) => {
    fetched.push(request.url ?? '');
    const document = documents.get(request.url ?? '');
    if (document === undefined) return void response.writeHead(404).end();
    response.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(document()));
  });
  const { origin } = await listenOnFreePort(server);
  return {
    origin,
    certificate: cert,
    fetched,
    close: () => closeServer(server),
  };
}

/**
 * A TCP listener on 127.0.0.1 that counts the connections it receives and closes each at once, before any TLS: where a
 * `client_id` points to see whether the server connected at all, and how many times.
 */
export async function startConnectionCounter(): Promise<{ port: number; connections: () => number; close: () => Promise<void> }> {
  let connections = 0;
  const server = createNetServer((socket) => {
    connections += 1;
    socket.destroy();
  });
  const { port } = await listenOnFreePort(server);
  return {
    port,
    connections: () => connections,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

async function closeServer(server: Server): Promise<void> {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
}

/**
 * What a browser does with an authorization URL, walked with fetch and a cookie jar: opens it, approves on the
 * consent page with `apiKey`, and returns where the server sends the browser back (the client's redirect URI, with
 * the code or the error). Every step before that must stay on the authorization URL's origin.
 */
export async function approveInBrowser(authorizationUrl: string, apiKey: string): Promise<URL> {
  const cookies = new Map<string, string>();
  const go = async (url: string, init: RequestInit = {}) => {
    const target = new URL(url, authorizationUrl);
    if (target.origin !== new URL(authorizationUrl).origin) throw new Error(`the consent flow left its server for ${target.href}`);
    const response = await fetch(target, {
      ...init,
      redirect: 'manual',
      headers: { ...(init.headers as Record<string, string>), cookie: [...cookies].map(([name, value]) => `${name}=${value}`).join('; ') },
    });
    for (const line of response.headers.getSetCookie()) {
      const [pair] = line.split(';');
      const [name, value] = pair!.split('=') as [string, string];
      cookies.set(name, value);
    }
    return response;
  };
  const consentUrl = (await go(authorizationUrl)).headers.get('location')!;
  const page = await (await go(consentUrl)).text();
  const csrf = /name="csrf" value="([^"]+)"/.exec(page)?.[1];
  if (csrf === undefined) throw new Error(`no consent page at ${consentUrl}: ${page.slice(0, 300)}`);
  const approved = await go(consentUrl, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ csrf, api_key: apiKey, decision: 'approve' }).toString(),
  });
  return new URL((await go(approved.headers.get('location')!)).headers.get('location')!, authorizationUrl);
}

/**
 * The authorization code flow as a browser would walk it (approveInBrowser): registers a client, approves with
 * `apiKey` on the consent page, and exchanges the code with PKCE. For checks that need a token, not a browser.
 */
export async function obtainAccessToken(serverUrl: string, apiKey: string): Promise<{ access_token: string; refresh_token?: string }> {
  const redirectUri = 'http://127.0.0.1:9/callback';
  const registered = (await (
    await fetch(`${serverUrl}/oauth/register`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ client_name: 'Checker', redirect_uris: [redirectUri], token_endpoint_auth_method: 'none' }),
    })
  ).json()) as { client_id: string };
  const verifier = randomBytes(32).toString('base64url');
  const challenge = createHash('sha256').update(verifier).digest('base64url');
  const query = new URLSearchParams({
    response_type: 'code',
    client_id: registered.client_id,
    redirect_uri: redirectUri,
    scope: 'contacts:read',
    code_challenge: challenge,
    code_challenge_method: 'S256',
  });
  const back = await approveInBrowser(`${serverUrl}/oauth/authorize?${query}`, apiKey);
  const token = await fetch(`${serverUrl}/oauth/token`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({
      grant_type: 'authorization_code',
      code: back.searchParams.get('code')!,
      client_id: registered.client_id,
      redirect_uri: redirectUri,
      code_verifier: verifier,
    }),
  });
  if (!token.ok) throw new Error(`token endpoint answered ${token.status}: ${await token.text()}`);
  return (await token.json()) as { access_token: string; refresh_token?: string };
}
