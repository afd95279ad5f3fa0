import { existsSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bearer, buildTestApp } from '../support/app.js';
import { describeEachBackend } from '../support/backends.js';
import { BIN, runBin } from '../support/cli.js';
import { listenOnFreePort } from '../support/listen.js';
import { postMcp } from '../support/mcp-request.js';
import { createKey, createUser } from '../support/seed.js';

const INVALID = 'Invalid or inactive API key';
const LACKS_SCOPE = 'API key lacks contacts:read';
const NEEDS_PRO = 'API access requires a Pro plan';
/** The default issuer (OAUTH_ISSUER unset, 127.0.0.1:3000): what starts an OAuth client's discovery. */
const METADATA = 'resource_metadata="http://127.0.0.1:3000/.well-known/oauth-protected-resource/mcp", scope="contacts:read"';

const INITIALIZE = {
  jsonrpc: '2.0',
  id: 1,
  method: 'initialize',
  params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'curl', version: '1' } },
};

describeEachBackend('MCP authentication', (db) => {
  let app: FastifyInstance;
  let mcpUrl: string;
  const keys: Record<'valid' | 'revoked' | 'expired' | 'noScope' | 'freePlan', string> = {} as never;
  let ownerId: string;

  const post = (headers: Record<string, string>, body: unknown = INITIALIZE) =>
    fetch(mcpUrl, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...headers },
      body: typeof body === 'string' ? body : JSON.stringify(body),
    });

  beforeAll(async () => {
    const { store } = db();
    ownerId = (await createUser(store)).id;
    const free = await createUser(store, 'free');
    keys.valid = (await createKey(store, ownerId)).key;
    const revoked = await createKey(store, ownerId);
    await store.keys.revoke(revoked.id);
    keys.revoked = revoked.key;
    keys.expired = (await createKey(store, ownerId, { expiresAt: '2020-01-01T00:00:00.000Z' })).key;
    keys.noScope = (await createKey(store, ownerId, { scopes: [] })).key;
    keys.freePlan = (await createKey(store, free.id)).key;
    app = await buildTestApp(store);
    mcpUrl = `${(await listenOnFreePort(app)).origin}/mcp`;
  });
  afterAll(async () => {
    await app?.close();
  });

  describe('hosted /mcp: the REST API’s rules and texts', () => {
    it('401 with WWW-Authenticate for a missing, non-Bearer, malformed, unknown, revoked or expired key', async () => {
      const cases: Record<string, [Record<string, string>, string]> = {
        // RFC 6750 §3.1: no Bearer credentials at all, so no error code; only where to get a token.
        missing: [{}, `Bearer ${METADATA}`],
        basic: [{ authorization: `Basic ${Buffer.from('a:b').toString('base64')}` }, `Bearer ${METADATA}`],
        malformed: [bearer('cnt_live_short'), `Bearer error="invalid_token", ${METADATA}`],
        unknown: [bearer(`${keys.valid.slice(0, -8)}AAAAAAAA`), `Bearer error="invalid_token", ${METADATA}`],
        revoked: [bearer(keys.revoked), `Bearer error="invalid_token", ${METADATA}`],
        expired: [bearer(keys.expired), `Bearer error="invalid_token", ${METADATA}`],
      };
      for (const [name, [headers, challenge]] of Object.entries(cases)) {
        const response = await post(headers);
        expect(response.status, name).toBe(401);
        expect(response.headers.get('www-authenticate'), name).toBe(challenge);
        expect(await response.json(), name).toEqual({ error: INVALID });
      }
    });

    it('checks the key before reading the body: a bad body without a key is still a 401', async () => {
      const response = await post({}, '{not json');
      expect(response.status).toBe(401);
    });

    it('403 for a key without contacts:read and for a user on the free plan', async () => {
      const scope = await post(bearer(keys.noScope));
      expect(scope.status).toBe(403);
      expect(await scope.json()).toEqual({ error: LACKS_SCOPE });
      expect(scope.headers.get('www-authenticate')).toBe(`Bearer error="insufficient_scope", ${METADATA}`);
      const plan = await post(bearer(keys.freePlan));
      expect(plan.status).toBe(403);
      expect(await plan.json()).toEqual({ error: NEEDS_PRO });
      expect(plan.headers.get('www-authenticate')).toBe(`Bearer error="insufficient_scope", ${METADATA}`);
    });

    it('the SDK client cannot connect with a bad key', async () => {
      const client = new Client({ name: 'test', version: '1' });
      const transport = new StreamableHTTPClientTransport(new URL(mcpUrl), { requestInit: { headers: bearer(keys.revoked) } });
      await expect(client.connect(transport)).rejects.toThrow(INVALID);
    });

    it('a key revoked during a session fails its next request', async () => {
      const { store } = db();
      const key = await createKey(store, ownerId);
      const client = new Client({ name: 'test', version: '1' });
      await client.connect(new StreamableHTTPClientTransport(new URL(mcpUrl), { requestInit: { headers: bearer(key.key) } }));
      await expect(client.callTool({ name: 'list_contacts', arguments: {} })).resolves.toMatchObject({ structuredContent: {} });
      await store.keys.revoke(key.id);
      await expect(client.callTool({ name: 'list_contacts', arguments: {} })).rejects.toThrow(INVALID);
      await client.close();
    });

    it('answers a valid initialize statelessly, in JSON, without a session id', async () => {
      const response = await post(bearer(keys.valid));
      expect(response.status).toBe(200);
      expect(response.headers.get('content-type')).toMatch(/^application\/json/);
      expect(response.headers.get('mcp-session-id')).toBeNull();
      expect(response.headers.get('cache-control')).toBe('no-store');
      const body = (await response.json()) as { result: { serverInfo: { name: string } } };
      expect(body.result.serverInfo.name).toBe('contacts-api');
    });

    it('keeps protocol errors in JSON-RPC: bad JSON (-32700), a non-JSON-RPC body (-32600, as JSON-RPC 2.0 says), a missing Accept', async () => {
      for (const body of ['{not json', '']) {
        const badJson = await post(bearer(keys.valid), body);
        expect(badJson.status).toBe(400);
        expect(await badJson.json()).toEqual({
          jsonrpc: '2.0',
          id: null,
          error: { code: -32700, message: 'Parse error: the body is not valid JSON' },
        });
      }
      const notRpc = await post(bearer(keys.valid), { hello: 'world' });
      expect(notRpc.status).toBe(400);
      expect(await notRpc.json()).toMatchObject({ jsonrpc: '2.0', error: { code: -32600 } });
      const noAccept = await post({ ...bearer(keys.valid), accept: 'application/json' });
      expect(noAccept.status).toBe(406);
      expect(await noAccept.json()).toMatchObject({ jsonrpc: '2.0', error: { code: -32000 } });
    });

    it('does not advertise tools.listChanged: the tools never change, so the notification never comes', async () => {
      const body = (await (await post(bearer(keys.valid))).json()) as { result: { capabilities: Record<string, unknown> } };
      expect(body.result.capabilities.tools).toEqual({});
    });

    it('refuses a browser Origin not on the allow-list with 403, whatever Host says (DNS rebinding); no Origin passes', async () => {
      const refused = await postMcp(app, keys.valid, INITIALIZE, { origin: 'http://evil.example.com', host: 'evil.example.com' });
      expect(refused.statusCode).toBe(403);
      expect(refused.json()).toEqual({
        jsonrpc: '2.0',
        id: null,
        error: { code: -32000, message: 'Forbidden: Origin "http://evil.example.com" is not allowed to call this MCP server' },
      });
      expect((await post(bearer(keys.valid))).status).toBe(200);

      const allowing = await buildTestApp(db().store, { config: { corsOrigins: ['https://app.example.com'] } });
      const call = (origin: string) => postMcp(allowing, keys.valid, INITIALIZE, { origin });
      expect((await call('https://app.example.com')).statusCode).toBe(200);
      expect((await call('https://app.example.com.evil.example')).statusCode).toBe(403);
      // The service's own origin (OAUTH_ISSUER, by default http://localhost:3000) and loopback pages pass.
      for (const origin of ['http://localhost:3000', 'http://localhost:6274', 'http://127.0.0.1:8080', 'http://[::1]:9']) {
        expect((await call(origin)).statusCode, origin).toBe(200);
      }
      for (const origin of ['http://localhost.evil.example', 'http://127.0.0.1.nip.io', 'null', 'file://localhost']) {
        expect((await call(origin)).statusCode, origin).toBe(403);
      }
      await allowing.close();
    });

    it('405 in JSON for GET and DELETE: no server-sent stream and no session in stateless mode', async () => {
      for (const method of ['GET', 'DELETE']) {
        const response = await fetch(mcpUrl, { method, headers: bearer(keys.valid) });
        expect(response.status, method).toBe(405);
        expect(response.headers.get('allow'), method).toBe('POST');
        expect(await response.json(), method).toHaveProperty('error');
      }
    });
  });

  describe('local `contacts-api mcp` (stdio)', () => {
    const env = (key?: string): Record<string, string> => ({
      DATABASE_URL: db().databaseUrl,
      API_KEY_PREFIX: 'cnt',
      ...(key === undefined ? {} : { CONTACTS_API_KEY: key }),
    });

    it('exits 1 before serving, saying so, when CONTACTS_API_KEY is not set', async () => {
      for (const key of [undefined, '', '  ']) {
        expect(await runBin(env(key), 'mcp'), String(key)).toEqual({
          code: 1,
          stdout: '',
          stderr: "error: CONTACTS_API_KEY is not set; mcp serves the contacts of that key's user\n",
        });
      }
    });

    it('never creates a database: a missing SQLite file is an error naming its path', async () => {
      const missing = join(mkdtempSync(join(tmpdir(), 'contacts-mcp-')), 'nowhere', 'contacts.db');
      const result = await runBin({ ...env(keys.revoked), DATABASE_URL: `file:${missing}` }, 'mcp');
      expect(result).toEqual({
        code: 1,
        stdout: '',
        stderr: `error: No database at ${missing}: create it with \`contacts-read-api migrate\` (or \`demo\`), or set DATABASE_URL\n`,
      });
      expect(existsSync(dirname(missing))).toBe(false);
    });

    it('exits 1 before serving, with the 401 text on stderr and nothing on stdout, for a bad key', async () => {
      for (const key of ['nonsense', keys.revoked, keys.expired]) {
        const result = await runBin(env(key), 'mcp');
        expect(result.code, String(key)).toBe(1);
        expect(result.stderr, String(key)).toBe(`error: ${INVALID}\n`);
        expect(result.stdout, String(key)).toBe('');
      }
    });

    it('exits 1 with the 403 texts for a key without contacts:read and a user on the free plan', async () => {
      expect(await runBin(env(keys.noScope), 'mcp')).toEqual({ code: 1, stdout: '', stderr: `error: ${LACKS_SCOPE}\n` });
      expect(await runBin(env(keys.freePlan), 'mcp')).toEqual({ code: 1, stdout: '', stderr: `error: ${NEEDS_PRO}\n` });
    });

    it('checks the key at every call: revoked during a session, the next call is a 401 tool error', async () => {
      const { store } = db();
      const key = await createKey(store, ownerId);
      const client = new Client({ name: 'test', version: '1' });
      await client.connect(
        new StdioClientTransport({ command: process.execPath, args: [BIN, 'mcp'], env: { PATH: process.env.PATH ?? '', ...env(key.key) } }),
      );
      const before = (await client.callTool({ name: 'list_contacts', arguments: {} })) as CallToolResult;
      expect(before.isError).toBeFalsy();
      await store.keys.revoke(key.id);
      const after = (await client.callTool({ name: 'list_contacts', arguments: {} })) as CallToolResult;
      expect(after).toEqual({ isError: true, content: [{ type: 'text', text: INVALID }] });
      await client.close();
    });
  });
});
