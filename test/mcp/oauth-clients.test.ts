import { chmodSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  Client as ClientV2,
  StreamableHTTPClientTransport as StreamableHTTPClientTransportV2,
  UnauthorizedError as UnauthorizedErrorV2,
} from '@modelcontextprotocol/client';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { UnauthorizedError } from '@modelcontextprotocol/sdk/client/auth.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import * as oauth from 'oauth4webapi';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { describeEachBackend } from '../support/backends.js';
import { freePort } from '../support/listen.js';
import {
  approveInBrowser,
  clientMetadataDocument,
  startDocumentServer,
  startRedirectReceiver,
  TestOAuthClient,
} from '../support/oauth-client.js';
import { createKey, createUser, importNumberedContacts } from '../support/seed.js';
import { startServerProcess, type ServerProcess } from '../support/server-process.js';

const MCP_REMOTE = fileURLToPath(new URL('../../node_modules/mcp-remote/dist/proxy.js', import.meta.url));
const CIMD_PATH = '/agents/cimd-agent.json';
/** A second agent's document: the server keeps a document it fetched, so each client that must be seen fetching has its own. */
const CIMD_2026_PATH = '/agents/cimd-agent-2026.json';
const TOOLS_LIST = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' });
const MCP_HEADERS = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' };

/**
 * OAuth clients other people wrote, against `serve --port P` with no OAUTH_ISSUER (and no PORT or HOST): mcp-remote
 * from the server URL alone, the v1 MCP SDK's client with a Client ID Metadata Document, the v2 client pinned to
 * 2026-07-28 (by metadata document and by dynamic registration), and oauth4webapi as a strict client sending DPoP proofs. The consent page is filled in with fetch (approveInBrowser): no browser needed.
 */
describeEachBackend('OAuth clients against serve with the default issuer', (db) => {
  let server: ServerProcess;
  let apiKey: string;
  let documents: Awaited<ReturnType<typeof startDocumentServer>>;
  let receiver: Awaited<ReturnType<typeof startRedirectReceiver>>;

  beforeAll(async () => {
    const { store, databaseUrl } = db();
    const owner = await createUser(store);
    await importNumberedContacts(store, owner.id, 3, 'Remote');
    apiKey = (await createKey(store, owner.id)).key;
    receiver = await startRedirectReceiver();
    documents = await startDocumentServer(
      new Map([CIMD_PATH, CIMD_2026_PATH].map((path) => [path, () => clientMetadataDocument(`${documents.origin}${path}`, receiver.url)])),
    );
    server = await startServerProcess(
      {
        DATABASE_URL: databaseUrl,
        OAUTH_ISSUER: undefined,
        PORT: undefined,
        HOST: undefined,
        OAUTH_CLIENT_METADATA_ALLOW_PRIVATE: 'true',
        NODE_EXTRA_CA_CERTS: documents.certificate,
        RATE_LIMIT_PER_MINUTE: '0',
      },
      await freePort(),
    );
  }, 60_000);

  afterAll(async () => {
    await server?.kill();
    await receiver?.close();
    await documents?.close();
  });

  it('the metadata, the 401 and the consent flow’s redirects all name the URL serve printed', async () => {
    const resource = await (await fetch(`${server.url}/.well-known/oauth-protected-resource/mcp`)).json();
    expect(resource).toMatchObject({ resource: `${server.url}/mcp`, authorization_servers: [server.url] });
    const metadata = (await (await fetch(`${server.url}/.well-known/oauth-authorization-server`)).json()) as Record<string, unknown>;
    expect(metadata.issuer).toBe(server.url);
    expect(metadata.authorization_endpoint).toBe(`${server.url}/oauth/authorize`);
    const challenge = (await fetch(`${server.url}/mcp`, { method: 'POST', headers: MCP_HEADERS, body: TOOLS_LIST })).headers;
    expect(challenge.get('www-authenticate')).toBe(
      `Bearer resource_metadata="${server.url}/.well-known/oauth-protected-resource/mcp", scope="contacts:read"`,
    );
    const registered = (await (
      await fetch(`${server.url}/oauth/register`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ redirect_uris: [receiver.url], token_endpoint_auth_method: 'none' }),
      })
    ).json()) as { client_id: string };
    const query = new URLSearchParams({
      response_type: 'code',
      client_id: registered.client_id,
      redirect_uri: receiver.url,
      code_challenge: 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM',
      code_challenge_method: 'S256',
    });
    // Every redirect of the consent flow stays on the server (approveInBrowser checks), then goes back to the client.
    const back = await approveInBrowser(`${server.url}/oauth/authorize?${query}`, apiKey);
    expect(`${back.origin}${back.pathname}`).toBe(receiver.url);
    expect(back.searchParams.get('iss')).toBe(server.url);
    expect(back.searchParams.get('code')).toBeTruthy();
  });

  it('mcp-remote goes from the server URL alone to a tool call, the user approving with a key', async () => {
    // mcp-remote opens the browser with `open`, whose xdg-open runs $BROWSER: this one hands the URL to the test.
    const dir = mkdtempSync(join(tmpdir(), 'contacts-api-mcp-remote-'));
    const browser = join(dir, 'browser.sh');
    const sendUrl = 'fetch(`${process.argv[1]}?url=${encodeURIComponent(process.argv[2])}`)';
    writeFileSync(browser, `#!/bin/sh\nexec "${process.execPath}" -e '${sendUrl}' "${receiver.url}" "$1"\n`);
    chmodSync(browser, 0o755);
    const opened = receiver.next();
    const callbackPort = String(await freePort());
    const transport = new StdioClientTransport({
      command: process.execPath,
      args: [MCP_REMOTE, `${server.url}/mcp`, callbackPort, '--transport', 'http-only'],
      env: { ...process.env, BROWSER: browser, MCP_REMOTE_CONFIG_DIR: join(dir, 'config'), DISPLAY: '', WAYLAND_DISPLAY: '' },
      stderr: 'pipe',
    });
    let log = '';
    // mcp-remote binds its callback port before opening the browser only when its GET probe of /mcp gets a 401; ours
    // is 405 (POST only), so it binds once the browser helper has exited, which a consent filled in by fetch can beat.
    // A person cannot; the test waits for the line mcp-remote writes once it listens.
    let callbackListening!: (port: string) => void;
    const listening = new Promise<string>((resolve) => (callbackListening = resolve));
    transport.stderr?.on('data', (chunk: Buffer) => {
      log += chunk.toString();
      const port = /OAuth callback server running at http:\/\/127\.0\.0\.1:(\d+)/.exec(log)?.[1];
      if (port !== undefined) callbackListening(port);
    });
    const client = new Client({ name: 'desktop-host', version: '1' });
    try {
      const connected = client.connect(transport);
      // mcp-remote gives up (and closes) when discovery fails: that ends the wait for the browser too.
      const authorizationUrl = (await Promise.race([opened, connected.then(() => new URLSearchParams())])).get('url');
      expect(authorizationUrl, log).toBeTruthy();
      expect(authorizationUrl!.startsWith(`${server.url}/oauth/authorize?`), log).toBe(true);
      const callback = await approveInBrowser(authorizationUrl!, apiKey);
      expect(callback.searchParams.get('iss')).toBe(server.url);
      expect(await Promise.race([listening, connected.then(() => 'connected without a callback')]), log).toBe(callbackPort);
      expect((await fetch(callback)).status, log).toBe(200);
      await connected;
      const result = (await client.callTool({ name: 'list_contacts', arguments: { limit: 5 } })) as CallToolResult;
      expect(result.isError, log).toBeFalsy();
      expect((result.structuredContent as { pagination: { total: number } }).pagination.total).toBe(3);
    } finally {
      await client.close();
    }
  }, 60_000);

  it('the MCP SDK client with a Client ID Metadata Document: fetched by the server, its token calls a tool', async () => {
    const mcpUrl = new URL(`${server.url}/mcp`);
    const agent = new TestOAuthClient(receiver.url, `${documents.origin}${CIMD_PATH}`);
    const transport = new StreamableHTTPClientTransport(mcpUrl, { authProvider: agent });
    await expect(new Client({ name: 'agent', version: '1' }).connect(transport)).rejects.toThrow(UnauthorizedError);
    expect(agent.clientInfo?.client_id).toBe(`${documents.origin}${CIMD_PATH}`);
    const back = await approveInBrowser(agent.authorizationUrl!.href, apiKey);
    expect(back.searchParams.get('iss')).toBe(server.url);
    await transport.finishAuth(back.searchParams.get('code')!);
    expect(documents.fetched).toContain(CIMD_PATH);
    const client = new Client({ name: 'agent', version: '1' });
    await client.connect(new StreamableHTTPClientTransport(mcpUrl, { authProvider: agent }));
    try {
      const result = (await client.callTool({ name: 'list_contacts', arguments: { limit: 5 } })) as CallToolResult;
      expect(result.isError).toBeFalsy();
    } finally {
      await client.close();
    }
  });

  /** The v2 client on the current revision only: it never falls back to 2025's initialize. */
  const currentRevisionClient = () =>
    new ClientV2({ name: 'agent-2026', version: '1' }, { versionNegotiation: { mode: { pin: '2026-07-28' } } });

  /** The v2 client's OAuth flow to a tool call: refused first, the user approves with a key, then connected again. */
  async function connectWithOAuthV2(agent: TestOAuthClient) {
    const mcpUrl = new URL(`${server.url}/mcp`);
    await expect(currentRevisionClient().connect(new StreamableHTTPClientTransportV2(mcpUrl, { authProvider: agent }))).rejects.toThrow(
      UnauthorizedErrorV2,
    );
    const back = await approveInBrowser(agent.authorizationUrl!.href, apiKey);
    expect(back.searchParams.get('iss')).toBe(server.url);
    const transport = new StreamableHTTPClientTransportV2(mcpUrl, { authProvider: agent });
    // The whole query, iss included: the v2 client checks it against the issuer it discovered (RFC 9207).
    await transport.finishAuth(back.searchParams);
    const client = currentRevisionClient();
    await client.connect(new StreamableHTTPClientTransportV2(mcpUrl, { authProvider: agent }));
    return client;
  }

  it('the v2 client pinned to 2026-07-28, registering by Client ID Metadata Document: its token calls a tool', async () => {
    const agent = new TestOAuthClient(receiver.url, `${documents.origin}${CIMD_2026_PATH}`, 'Agent 2026');
    const client = await connectWithOAuthV2(agent);
    try {
      expect(agent.clientInfo?.client_id).toBe(`${documents.origin}${CIMD_2026_PATH}`);
      expect(documents.fetched).toContain(CIMD_2026_PATH);
      expect(client.getNegotiatedProtocolVersion()).toBe('2026-07-28');
      const result = await client.callTool({ name: 'list_contacts', arguments: { limit: 5 } });
      expect(result.isError).toBeFalsy();
      expect((result.structuredContent as { pagination: { total: number } }).pagination.total).toBe(3);
    } finally {
      await client.close();
    }
  });

  it('the v2 client pinned to 2026-07-28, without a metadata document, registers dynamically as a native app', async () => {
    const agent = new TestOAuthClient(receiver.url, undefined, 'Agent 2026 (DCR)');
    const client = await connectWithOAuthV2(agent);
    try {
      expect(agent.clientInfo).toMatchObject({ application_type: 'native', redirect_uris: [receiver.url] });
      expect(client.getNegotiatedProtocolVersion()).toBe('2026-07-28');
      expect((await client.listTools()).tools.length).toBeGreaterThan(0);
    } finally {
      await client.close();
    }
  });

  it('oauth4webapi, strict, sending DPoP proofs: checks iss (RFC 9207), gets a Bearer token that /mcp takes one way', async () => {
    const issuer = new URL(server.url);
    const insecure = { [oauth.allowInsecureRequests]: true };
    const as = await oauth.processDiscoveryResponse(issuer, await oauth.discoveryRequest(issuer, { ...insecure, algorithm: 'oauth2' }));
    expect(as.authorization_response_iss_parameter_supported).toBe(true);
    expect(as.dpop_signing_alg_values_supported).toBeUndefined();
    const client: oauth.Client = await oauth.processDynamicClientRegistrationResponse(
      await oauth.dynamicClientRegistrationRequest(
        as,
        { client_name: 'Strict Agent', redirect_uris: [receiver.url], token_endpoint_auth_method: 'none' },
        insecure,
      ),
    );
    const verifier = oauth.generateRandomCodeVerifier();
    const state = oauth.generateRandomState();
    const url = new URL(as.authorization_endpoint!);
    url.search = new URLSearchParams({
      response_type: 'code',
      client_id: client.client_id,
      redirect_uri: receiver.url,
      code_challenge: await oauth.calculatePKCECodeChallenge(verifier),
      code_challenge_method: 'S256',
      state,
    }).toString();
    const back = await approveInBrowser(url.href, apiKey);
    const params = oauth.validateAuthResponse(as, client, back, state);
    const DPoP = oauth.DPoP(client, await oauth.generateKeyPair('ES256'));
    const exchange = () =>
      oauth.authorizationCodeGrantRequest(as, client, oauth.None(), params, receiver.url, verifier, { ...insecure, DPoP });
    const tokens = await oauth.processAuthorizationCodeResponse(as, client, await exchange());
    expect(tokens.token_type).toBe('bearer');
    expect(tokens.scope).toBe('contacts:read');
    const call = (authorization: string) =>
      fetch(`${server.url}/mcp`, { method: 'POST', headers: { ...MCP_HEADERS, authorization }, body: TOOLS_LIST });
    expect((await call(`Bearer ${tokens.access_token}`)).status).toBe(200);
    // The proof's scheme is one /mcp does not take: refused like any other unsupported scheme.
    expect((await call(`DPoP ${tokens.access_token}`)).status).toBe(401);
  });
});
