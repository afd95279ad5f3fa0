import { existsSync } from 'node:fs';
import {
  Client as V2Client,
  StreamableHTTPClientTransport as V2HttpTransport,
  UnauthorizedError as V2UnauthorizedError,
} from '@modelcontextprotocol/client';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { refreshAuthorization, UnauthorizedError } from '@modelcontextprotocol/sdk/client/auth.js';
import { InvalidGrantError } from '@modelcontextprotocol/sdk/server/auth/errors.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { AuthorizationServerMetadata } from '@modelcontextprotocol/sdk/shared/auth.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { chromium, type Browser } from 'playwright-core';
import { afterAll, beforeAll, expect, it, vi } from 'vitest';
import { describeEachBackend } from '../support/backends.js';
import { freePort } from '../support/listen.js';
import { clientMetadataDocument, startDocumentServer, startRedirectReceiver, TestOAuthClient } from '../support/oauth-client.js';
import { createKey, createUser, importNumberedContacts } from '../support/seed.js';
import { startServerProcess, type ServerProcess } from '../support/server-process.js';

const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
const CHROMIUM_ARGS = ['--headless', '--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-background-networking'];
const CIMD_PATH = '/agents/test-agent.json';
const PIN_2026 = { versionNegotiation: { mode: { pin: '2026-07-28' } } } as const;

function skipBrowser(): boolean {
  if (existsSync(CHROMIUM) || process.env.CI === 'true') return false;
  console.warn(
    `\n*** MCP OAuth browser tests: SKIPPED — no Chromium at ${CHROMIUM} (apt-get install chromium, or set CHROMIUM_PATH). ***\n`,
  );
  return true;
}

/**
 * The whole flow as Claude.ai, ChatGPT or the MCP Inspector run it, against a spawned server: the MCP TypeScript SDK's
 * own OAuth client discovers, registers (or uses a Client ID Metadata Document), sends the user to the consent page
 * (filled in by headless Chromium), exchanges the code with PKCE and refreshes.
 */
describeEachBackend('MCP over OAuth, end to end', (db) => {
  if (skipBrowser()) return;
  let server: ServerProcess;
  let browser: Browser;
  let receiver: Awaited<ReturnType<typeof startRedirectReceiver>>;
  let documents: Awaited<ReturnType<typeof startDocumentServer>>;
  let mcpUrl: URL;
  let key: { id: string; key: string };
  /** Every secret the test saw: none may appear in the server's output. */
  const secrets = new Set<string>();

  beforeAll(async () => {
    const { store, databaseUrl } = db();
    const owner = await createUser(store);
    await importNumberedContacts(store, owner.id, 3, 'Oauth');
    key = await createKey(store, owner.id);
    secrets.add(key.key);
    receiver = await startRedirectReceiver();
    documents = await startDocumentServer(
      new Map([[CIMD_PATH, () => clientMetadataDocument(`${documents.origin}${CIMD_PATH}`, receiver.url)]]),
    );
    const port = await freePort();
    server = await startServerProcess(
      {
        DATABASE_URL: databaseUrl,
        OAUTH_ISSUER: `http://127.0.0.1:${port}`,
        OAUTH_CLIENT_METADATA_ALLOW_PRIVATE: 'true',
        NODE_EXTRA_CA_CERTS: documents.certificate,
        RATE_LIMIT_PER_MINUTE: '0',
        LOG_LEVEL: 'trace',
      },
      port,
    );
    mcpUrl = new URL(`${server.url}/mcp`);
    browser = await chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS });
  }, 60_000);

  afterAll(async () => {
    await browser?.close();
    await server?.kill();
    await receiver?.close();
    await documents?.close();
  });

  /** Runs the SDK client until it needs the user, lets the user approve in the browser, and finishes with the code. */
  async function authorize(
    agent: TestOAuthClient,
    apiKey = key.key,
    client = 'v1' as 'v1' | 'v2',
  ): Promise<{ consentText: string; code: string }> {
    const transport = await connectUnauthorized(agent, client);
    const page = await browser.newPage();
    try {
      const redirected = receiver.next();
      await page.goto(agent.authorizationUrl!.href);
      const consentText = await page.locator('main').innerText();
      // By keyboard alone: the key field is the first stop, and Enter approves.
      await page.keyboard.press('Tab');
      expect(await page.evaluate('document.activeElement?.id')).toBe('api_key');
      await page.keyboard.type(apiKey);
      await page.keyboard.press('Enter');
      const query = await redirected;
      const code = query.get('code');
      if (code === null) throw new Error(`no code: ${query.toString()}`);
      secrets.add(code);
      await transport.finish(query);
      for (const token of [agent.saved?.access_token, agent.saved?.refresh_token]) if (token) secrets.add(token);
      return { consentText, code };
    } finally {
      await page.close();
    }
  }

  /**
   * Connects as the agent, which fails for want of a token and leaves the authorization URL with the agent: with the v1
   * SDK's client, or with the v2 one pinned to 2026-07-28. Returns how to finish the flow with the redirect's query: the
   * v2 client checks its `iss` (RFC 9207), the v1 client reads the code alone.
   */
  async function connectUnauthorized(
    agent: TestOAuthClient,
    client: 'v1' | 'v2',
  ): Promise<{ finish: (query: URLSearchParams) => Promise<void> }> {
    if (client === 'v2') {
      const transport = new V2HttpTransport(mcpUrl, { authProvider: agent });
      await expect(new V2Client({ name: 'agent', version: '1' }, PIN_2026).connect(transport)).rejects.toThrow(V2UnauthorizedError);
      return { finish: (query) => transport.finishAuth(query) };
    }
    const transport = new StreamableHTTPClientTransport(mcpUrl, { authProvider: agent });
    await expect(new Client({ name: 'agent', version: '1' }).connect(transport)).rejects.toThrow(UnauthorizedError);
    return { finish: (query) => transport.finishAuth(query.get('code')!) };
  }

  async function listWith(agent: TestOAuthClient): Promise<CallToolResult> {
    const client = new Client({ name: 'agent', version: '1' });
    await client.connect(new StreamableHTTPClientTransport(mcpUrl, { authProvider: agent }));
    try {
      return (await client.callTool({ name: 'list_contacts', arguments: { limit: 5 } })) as CallToolResult;
    } finally {
      await client.close();
    }
  }

  const postMcp = (token: string) =>
    fetch(mcpUrl, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
    });

  it('discovers, registers, shows the consent page, exchanges the code with PKCE, and the token reads the contacts', async () => {
    const agent = new TestOAuthClient(receiver.url);
    const { consentText, code } = await authorize(agent);
    expect(consentText).toContain('Connect Test Agent to Contacts');
    expect(consentText).toContain(`your browser returns to ${new URL(receiver.url).host}`);
    expect(agent.clientInfo?.client_id).toMatch(/\S{16,}/);
    expect(agent.saved).toMatchObject({ token_type: expect.stringMatching(/^bearer$/i), scope: 'contacts:read' });
    expect(agent.saved!.expires_in).toBeLessThanOrEqual(3600);
    expect(agent.saved!.refresh_token).toBeTruthy();
    const result = await listWith(agent);
    expect(result.isError).toBeFalsy();
    expect((result.structuredContent as { pagination: { total: number } }).pagination.total).toBe(3);

    // A code works once.
    const reuse = await fetch(`${server.url}/oauth/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({
        grant_type: 'authorization_code',
        code,
        client_id: agent.clientInfo!.client_id,
        redirect_uri: receiver.url,
        code_verifier: agent.codeVerifier(),
      }),
    });
    expect(reuse.status).toBe(400);
    expect(await reuse.json()).toMatchObject({ error: 'invalid_grant' });
  });

  it('rotates refresh tokens, and a reused one is refused and ends the whole grant', async () => {
    const agent = new TestOAuthClient(receiver.url);
    await authorize(agent);
    const first = agent.saved!;
    const metadata = (await (await fetch(`${server.url}/.well-known/oauth-authorization-server`)).json()) as AuthorizationServerMetadata;
    const refresh = (refreshToken: string) =>
      refreshAuthorization(server.url, { metadata, clientInformation: agent.clientInfo!, refreshToken, resource: mcpUrl });
    const second = await refresh(first.refresh_token!);
    secrets.add(second.access_token).add(second.refresh_token!);
    expect(second.refresh_token).not.toBe(first.refresh_token);
    expect((await postMcp(second.access_token)).status).toBe(200);

    await expect(refresh(first.refresh_token!)).rejects.toBeInstanceOf(InvalidGrantError);
    expect((await postMcp(second.access_token)).status).toBe(401);
    await expect(refresh(second.refresh_token!)).rejects.toBeInstanceOf(InvalidGrantError);
  });

  it('a Client ID Metadata Document works as the client: fetched by the server, its name shown on the consent page', async () => {
    const agent = new TestOAuthClient(receiver.url, `${documents.origin}${CIMD_PATH}`);
    const { consentText } = await authorize(agent);
    expect(agent.clientInfo?.client_id).toBe(`${documents.origin}${CIMD_PATH}`);
    expect(consentText).toContain('Connect Metadata Document Agent');
    expect(documents.fetched).toContain(CIMD_PATH);
    expect((await listWith(agent)).isError).toBeFalsy();
  });

  it('the v2 client pinned to 2026-07-28 goes through the same flow with a Client ID Metadata Document, and reads', async () => {
    const agent = new TestOAuthClient(receiver.url, `${documents.origin}${CIMD_PATH}`);
    const { consentText } = await authorize(agent, key.key, 'v2');
    expect(consentText).toContain('Connect Metadata Document Agent');
    const client = new V2Client({ name: 'agent', version: '1' }, PIN_2026);
    await client.connect(new V2HttpTransport(mcpUrl, { authProvider: agent }));
    try {
      expect(client.getNegotiatedProtocolVersion()).toBe('2026-07-28');
      const result = (await client.callTool({ name: 'list_contacts', arguments: { limit: 5 } })) as CallToolResult;
      expect(result.isError).toBeFalsy();
      expect((result.structuredContent as { pagination: { total: number } }).pagination.total).toBe(3);
    } finally {
      await client.close();
    }
  });

  it('revoking the API key behind a grant stops its access token within 1 s, and its refresh token', async () => {
    const { store } = db();
    const own = await createKey(store, (await store.keys.findById(key.id))!.key.owner_id);
    secrets.add(own.key);
    const agent = new TestOAuthClient(receiver.url);
    await authorize(agent, own.key);
    expect((await postMcp(agent.saved!.access_token)).status).toBe(200);
    await store.keys.revoke(own.id);
    const revokedAt = Date.now();
    await vi.waitFor(async () => expect((await postMcp(agent.saved!.access_token)).status).toBe(401), { timeout: 1000, interval: 50 });
    expect(Date.now() - revokedAt).toBeLessThan(1000);
    const response = await postMcp(agent.saved!.access_token);
    expect(await response.json()).toEqual({ error: 'Invalid or inactive API key' });
    const metadata = (await (await fetch(`${server.url}/.well-known/oauth-authorization-server`)).json()) as AuthorizationServerMetadata;
    await expect(
      refreshAuthorization(server.url, {
        metadata,
        clientInformation: agent.clientInfo!,
        refreshToken: agent.saved!.refresh_token!,
        resource: mcpUrl,
      }),
    ).rejects.toBeInstanceOf(InvalidGrantError);
  });

  it('a token revoked at the revocation endpoint (RFC 7009) stops working at once', async () => {
    const agent = new TestOAuthClient(receiver.url);
    await authorize(agent);
    const revoked = await fetch(`${server.url}/oauth/revoke`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ token: agent.saved!.access_token, client_id: agent.clientInfo!.client_id }),
    });
    expect(revoked.status).toBe(200);
    expect((await postMcp(agent.saved!.access_token)).status).toBe(401);
  });

  it('a wrong key shows the page again with the reason, and Deny sends access_denied back to the client', async () => {
    const agent = new TestOAuthClient(receiver.url);
    const transport = new StreamableHTTPClientTransport(mcpUrl, { authProvider: agent });
    await expect(new Client({ name: 'agent', version: '1' }).connect(transport)).rejects.toThrow(UnauthorizedError);
    const page = await browser.newPage();
    try {
      await page.goto(agent.authorizationUrl!.href);
      await page.getByLabel('Your personal API key').fill('cnt_live_notarealkeynotarealkeynotarealkey00');
      await page.getByRole('button', { name: 'Approve' }).click();
      expect(await page.getByRole('alert').innerText()).toBe('Invalid or inactive API key');
      expect(await page.getByLabel('Your personal API key').getAttribute('aria-invalid')).toBe('true');
      const redirected = receiver.next();
      await page.getByRole('button', { name: 'Deny' }).click();
      const query = await redirected;
      expect(query.get('error')).toBe('access_denied');
      expect(query.get('code')).toBeNull();
    } finally {
      await page.close();
    }
  });

  it('writes no key, code or token to any log line, and nothing but JSON lines to stdout', () => {
    const output = server.output();
    for (const line of server
      .stdout()
      .split('\n')
      .filter((text) => text !== ''))
      expect(() => JSON.parse(line), line).not.toThrow();
    expect(output).toContain('/oauth/token');
    expect(secrets.size).toBeGreaterThanOrEqual(10);
    for (const secret of secrets) expect(output.includes(secret), `a secret (${secret.slice(0, 6)}…) is in the log`).toBe(false);
  });
});
