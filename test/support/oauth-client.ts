import { execFileSync } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, readFileSync } from 'node:fs';
import { createServer as createHttpServer, type Server } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import { createServer as createNetServer, type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { OAuthClientProvider } from '@modelcontextprotocol/sdk/client/auth.js';
import type { OAuthClientInformationMixed, OAuthClientMetadata, OAuthTokens } from '@modelcontextprotocol/sdk/shared/auth.js';

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
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/callback`,
    next: () => new Promise((resolve) => (waiting = resolve)),
    close: () => closeServer(server),
  };
}

/** A port free right now, for a server whose own URL (OAUTH_ISSUER) must be known before it starts. */
export async function freePort(): Promise<number> {
  const server = createNetServer().listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

/**
 * An https server on 127.0.0.1 with a certificate made for it (Debian's openssl), serving JSON documents by path:
 * where a client publishes its Client ID Metadata Document. `certificate` is the file NODE_EXTRA_CA_CERTS takes.
 */
export async function startDocumentServer(documents: Map<string, () => unknown>) {
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
    response.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(document()));
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return {
    origin: `https://127.0.0.1:${(server.address() as AddressInfo).port}`,
    certificate: cert,
    fetched,
    close: () => closeServer(server),
  };
}

async function closeServer(server: Server): Promise<void> {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
}
