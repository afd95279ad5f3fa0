import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import { Client as V1Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport as V1HttpTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RATE_LIMIT_WINDOW_MS } from '../../src/domain/rate-limit.js';
import { CONTACT_CARDS_URI } from '../../src/mcp/contact-cards.js';
import { createMcpEndpoint, MODERN_PROTOCOL_VERSION } from '../../src/mcp/endpoint.js';
import { RESPONSE_TOO_LARGE_MESSAGE } from '../../src/mcp/metered-transport.js';
import { warmUpHostedSearch } from '../../src/mcp/warm-up.js';
import { MCP_CACHE_HINTS } from '../../src/mcp/cache-hints.js';
import { createMemoryCounter } from '../../src/rate-limit/memory-counter.js';
import type { Contact } from '../../src/domain/contact.js';
import { bearer, buildTestApp } from '../support/app.js';
import { DAY_MS } from '../../src/domain/duration.js';
import { serviceKeyFrom } from '../../src/web/service-key.js';
import { describeEachBackend } from '../support/backends.js';
import { BIN, mcpEnv } from '../support/cli.js';
import { listenOnFreePort } from '../support/listen.js';
import { postMcp } from '../support/mcp-request.js';
import { contactRecord, createKey, createUser } from '../support/seed.js';

const PIN = { versionNegotiation: { mode: { pin: MODERN_PROTOCOL_VERSION } } } as const;
const TOOL_ORDER = ['list_contacts', 'search_contacts', 'get_contact', 'list_changes', 'search', 'fetch'];
const LIMIT = 4;

type Result = { structuredContent?: Record<string, unknown>; isError?: boolean; content?: { type: string; text?: string }[] };
/** One exchange the v2 client had with /mcp, as the wire carried it. */
type Exchange = { headers: Headers; body: { method: string; params?: Record<string, unknown> }; status: number; answer: unknown };

/** A 2026-07-28 request as the client sends it: the envelope in `_meta`, and the headers that name it. */
function modernRequest(method: string, params: Record<string, unknown> = {}) {
  const body = {
    jsonrpc: '2.0',
    id: 1,
    method,
    params: {
      ...params,
      _meta: {
        'io.modelcontextprotocol/protocolVersion': MODERN_PROTOCOL_VERSION,
        'io.modelcontextprotocol/clientCapabilities': {},
        'io.modelcontextprotocol/clientInfo': { name: 'raw', version: '1' },
      },
    },
  };
  const headers: Record<string, string> = { 'mcp-protocol-version': MODERN_PROTOCOL_VERSION, 'mcp-method': method };
  const name = params.name ?? params.uri;
  if (typeof name === 'string') headers['mcp-name'] = name;
  return { body, headers };
}

describeEachBackend('MCP 2026-07-28: the v2 client pinned to it, and a 2025-11-25 client on the same URL', (db) => {
  let app: FastifyInstance;
  let limited: FastifyInstance;
  let baseUrl: string;
  let ownerKey: string;
  let owned: Contact[];
  let ownerId: string;
  const clock = { now: 1_000_000 };

  /** A v2 client pinned to 2026-07-28 over HTTP, recording every exchange. */
  async function connectHttp(key: string, exchanges: Exchange[] = []): Promise<Client> {
    const recording: typeof fetch = async (input, init) => {
      const response = await fetch(input, init);
      if (init?.method === 'POST') {
        const answer = response.headers.get('content-type')?.startsWith('application/json') ? await response.clone().json() : null;
        const body = JSON.parse(String(init.body)) as Exchange['body'];
        exchanges.push({ headers: new Headers(init.headers), body, status: response.status, answer });
      }
      return response;
    };
    const client = new Client({ name: 'contacts-api-test', version: '1.0.0' }, PIN);
    await client.connect(
      new StreamableHTTPClientTransport(new URL(`${baseUrl}/mcp`), { requestInit: { headers: bearer(key) }, fetch: recording }),
    );
    return client;
  }

  const callTool = async (client: Client, name: string, args: Record<string, unknown>) =>
    (await client.callTool({ name, arguments: args })) as Result;

  beforeAll(async () => {
    const { store } = db();
    const owner = await createUser(store, 'pro', 'Owner Self');
    ownerKey = (await createKey(store, owner.id)).key;
    const other = await createUser(store);
    await store.contacts.importContacts(other.id, [contactRecord({ name: 'Ada Other' })]);
    await store.contacts.importContacts(owner.id, [
      contactRecord({ name: 'Ada Lovelace', email: 'ada@example.com', created_at: '2024-01-01T00:00:00.000Z' }),
      contactRecord({ name: 'Charles Babbage', title: 'Inventor', created_at: '2024-01-02T00:00:00.000Z' }),
    ]);
    ownerId = owner.id;
    owned = (await store.contacts.listPage(owner.id, { limit: 100, offset: 0 })).contacts;
    app = await buildTestApp(store);
    ({ origin: baseUrl } = await listenOnFreePort(app));
    const counter = createMemoryCounter({ windowMs: RATE_LIMIT_WINDOW_MS, now: () => clock.now });
    limited = await buildTestApp(store, { config: { rateLimit: { perMinute: LIMIT } }, requestCounter: counter });
  });
  afterAll(async () => {
    await app?.close();
    await limited?.close();
  });

  describe('over HTTP with an API key', () => {
    let client: Client;
    const exchanges: Exchange[] = [];
    beforeAll(async () => {
      client = await connectHttp(ownerKey, exchanges);
    });
    afterAll(async () => {
      await client?.close();
    });

    it('negotiates 2026-07-28 with server/discover, which names the server and carries a public cache hint', async () => {
      expect(client.getProtocolEra()).toBe('modern');
      expect(client.getNegotiatedProtocolVersion()).toBe(MODERN_PROTOCOL_VERSION);
      expect(client.getServerVersion()).toMatchObject({ name: 'contacts-api' });
      const discover = exchanges.find((exchange) => exchange.body.method === 'server/discover')!;
      expect(discover.status).toBe(200);
      expect(discover.answer).toMatchObject({ result: MCP_CACHE_HINTS['server/discover'] });
      expect(exchanges.some((exchange) => exchange.body.method === 'initialize')).toBe(false);
    });

    it('lists the tools in a fixed order, each read-only, with the tool list’s shared, hour-long cache hint', async () => {
      const { tools } = await client.listTools();
      expect(tools.map((tool) => tool.name)).toEqual(TOOL_ORDER);
      for (const tool of tools) expect(tool.annotations, tool.name).toMatchObject({ readOnlyHint: true });
      const listed = exchanges.filter((exchange) => exchange.body.method === 'tools/list').at(-1)!;
      expect(listed.answer).toMatchObject({ result: { ttlMs: 60 * 60 * 1000, cacheScope: 'public' } });
    });

    it('chooses each list’s cache hint: templates and the cards page public for an hour, the owner’s contacts private for a minute', async () => {
      await client.listResourceTemplates();
      await client.listResources();
      await client.readResource({ uri: CONTACT_CARDS_URI }, { cacheMode: 'bypass' });
      await client.readResource({ uri: `contacts://contact/${owned[0]!.id}` }, { cacheMode: 'bypass' });
      const answerOf = (method: string, uri?: string) =>
        exchanges.filter((exchange) => exchange.body.method === method && (uri === undefined || exchange.body.params?.uri === uri)).at(-1)!
          .answer;
      expect(answerOf('resources/templates/list')).toMatchObject({ result: { ttlMs: 60 * 60 * 1000, cacheScope: 'public' } });
      expect(answerOf('resources/read', CONTACT_CARDS_URI)).toMatchObject({ result: { ttlMs: 60 * 60 * 1000, cacheScope: 'public' } });
      expect(answerOf('resources/list')).toMatchObject({ result: { ttlMs: 60_000, cacheScope: 'private' } });
      expect(answerOf('resources/read', `contacts://contact/${owned[0]!.id}`)).toMatchObject({
        result: { ttlMs: 60_000, cacheScope: 'private' },
      });
    });

    it('runs each tool for the key’s owner, sending Mcp-Method and Mcp-Name with every call', async () => {
      const ada = owned.find((contact) => contact.name === 'Ada Lovelace')!;
      const listed = await callTool(client, 'list_contacts', {});
      expect((listed.structuredContent!.data as Contact[]).map((contact) => contact.name).sort()).toEqual(
        owned.map((contact) => contact.name).sort(),
      );
      const searched = await callTool(client, 'search_contacts', { query: 'ada' });
      expect((searched.structuredContent!.data as Contact[]).map((contact) => contact.id)).toEqual([ada.id]);
      const got = await callTool(client, 'get_contact', { id: ada.id });
      expect(got.structuredContent!.contact).toMatchObject({ id: ada.id, name: 'Ada Lovelace' });
      const search = await callTool(client, 'search', { query: 'ada' });
      expect((search.structuredContent!.results as { id: string }[]).map((hit) => hit.id)).toEqual([ada.id]);
      const fetched = await callTool(client, 'fetch', { id: ada.id });
      expect(fetched.structuredContent).toMatchObject({ id: ada.id, title: 'Ada Lovelace' });
      const missing = await callTool(client, 'get_contact', { id: '0190a1b2-0000-7000-8000-000000000000' });
      expect(missing).toMatchObject({ isError: true, content: [{ type: 'text', text: 'Contact not found' }] });

      const calls = exchanges.filter((exchange) => exchange.body.method === 'tools/call');
      expect(calls).toHaveLength(6);
      for (const { headers, body } of calls) {
        expect(headers.get('mcp-method')).toBe('tools/call');
        expect(headers.get('mcp-name')).toBe(body.params!.name);
        expect(headers.get('mcp-protocol-version')).toBe(MODERN_PROTOCOL_VERSION);
      }
    });

    it('counts the requests in the metrics by method and tool, from the headers', async () => {
      const metric = await app.metrics.registry.getSingleMetric('contacts_api_mcp_requests_total')!.get();
      const count = (method: string, tool: string) =>
        metric.values.find((value) => value.labels.method === method && value.labels.tool === tool)?.value ?? 0;
      expect(count('tools/call', 'get_contact')).toBeGreaterThanOrEqual(2);
      expect(count('server/discover', '')).toBeGreaterThanOrEqual(1);
    });
  });

  describe('the SEP-2243 headers, checked against the body', () => {
    const post = (request: ReturnType<typeof modernRequest>, headers: Record<string, string | undefined>) =>
      postMcp(
        app,
        ownerKey,
        request.body,
        Object.fromEntries(Object.entries({ ...request.headers, ...headers }).filter(([, v]) => v !== undefined)) as Record<string, string>,
      );

    it('answers a request whose headers agree with its body', async () => {
      const response = await post(modernRequest('tools/call', { name: 'search_contacts', arguments: { query: 'ada' } }), {});
      expect(response.statusCode).toBe(200);
      expect(response.json()).toMatchObject({ id: 1, result: { structuredContent: { query: 'ada' } } });
    });

    it.each([
      ['Mcp-Method missing', { 'mcp-method': undefined }],
      ['Mcp-Method contradicting the body', { 'mcp-method': 'tools/list' }],
      ['Mcp-Name missing', { 'mcp-name': undefined }],
      ['Mcp-Name naming another tool', { 'mcp-name': 'get_contact' }],
      ['MCP-Protocol-Version missing', { 'mcp-protocol-version': undefined }],
    ])('refuses %s with HTTP 400 and -32020, running nothing', async (_case, headers) => {
      const response = await post(modernRequest('tools/call', { name: 'search_contacts', arguments: { query: 'ada' } }), headers);
      expect(response.statusCode).toBe(400);
      expect(response.json()).toMatchObject({ jsonrpc: '2.0', id: 1, error: { code: -32020 } });
    });
  });

  describe('the revision’s error codes', () => {
    it('answers a revision it does not speak with -32022, naming the one it does', async () => {
      const request = modernRequest('tools/list');
      const body = {
        ...request.body,
        params: { _meta: { ...request.body.params._meta, 'io.modelcontextprotocol/protocolVersion': '2099-01-01' } },
      };
      const response = await postMcp(app, ownerKey, body, { ...request.headers, 'mcp-protocol-version': '2099-01-01' });
      expect(response.json()).toMatchObject({ id: 1, error: { code: -32022, data: { supported: [MODERN_PROTOCOL_VERSION] } } });
    });

    it('refuses a batch of 2026-07-28 requests, with the header or without it, running none', async () => {
      const request = modernRequest('tools/call', { name: 'list_contacts', arguments: { limit: 1 } });
      const batch = [request.body, { ...request.body, id: 2 }];
      const named = await postMcp(app, ownerKey, batch, { 'mcp-protocol-version': MODERN_PROTOCOL_VERSION });
      expect(named.statusCode).toBe(400);
      expect(named.json()).toMatchObject({ error: { code: -32600 } });
      const unnamed = await postMcp(app, ownerKey, batch);
      expect(unnamed.statusCode).toBe(400);
      expect(unnamed.json()).toEqual({
        jsonrpc: '2.0',
        id: null,
        error: {
          code: -32600,
          message: 'Bad Request: JSON-RPC batches may not contain requests for protocol revision 2026-07-28 or later',
        },
      });
    });

    it('answers an unknown tool with -32602, and bad arguments with a tool error naming the argument', async () => {
      const unknown = modernRequest('tools/call', { name: 'delete_contact', arguments: {} });
      expect((await postMcp(app, ownerKey, unknown.body, unknown.headers)).json()).toEqual({
        jsonrpc: '2.0',
        id: 1,
        error: { code: -32602, message: 'Tool delete_contact not found' },
      });
      const bad = modernRequest('tools/call', { name: 'list_contacts', arguments: { limit: 1000 } });
      const answer = (await postMcp(app, ownerKey, bad.body, bad.headers)).json() as { result: Result };
      expect(answer.result.isError).toBe(true);
      expect(answer.result.content![0]!.text).toContain('"limit" must be an integer from 1 to 100');
    });
  });

  it(`spends one unit of the key’s limit per call: with a limit of ${LIMIT}, the call after them is a 429`, async () => {
    const key = (await createKey(db().store, (await createUser(db().store)).id)).key;
    const call = modernRequest('tools/call', { name: 'list_contacts', arguments: { limit: 1 } });
    const remaining: string[] = [];
    for (let i = 0; i < LIMIT; i += 1) {
      const response = await postMcp(limited, key, call.body, call.headers);
      expect(response.statusCode).toBe(200);
      remaining.push(String(response.headers['x-ratelimit-remaining']));
    }
    expect(remaining).toEqual(['3', '2', '1', '0']);
    const refused = await postMcp(limited, key, call.body, call.headers);
    expect(refused.statusCode).toBe(429);
    expect(refused.json()).toEqual({ error: 'Rate limit exceeded' });
  });

  it('the warm-up runs its search through both eras’ pipelines, and each is answered, not refused', async () => {
    const rejected: Error[] = [];
    const { store } = db();
    const endpoint = createMcpEndpoint({
      sources: { contacts: store.contacts, contactUrl: (id) => id, serviceKey: serviceKeyFrom(store.oauth), retentionMs: DAY_MS },
      maxResponseBytes: 1024 * 1024,
      onRejected: (error) => rejected.push(error),
    });
    const answers: unknown[] = [];
    await warmUpHostedSearch(async (request, body, caller) => {
      const answer = await endpoint(request, body, caller);
      answers.push(await answer.clone().json());
      return answer;
    }, `${baseUrl}/mcp`);
    expect(rejected).toEqual([]);
    expect(answers).toEqual([
      expect.objectContaining({ result: expect.objectContaining({ structuredContent: expect.objectContaining({ data: [] }) }) }),
      expect.objectContaining({ result: expect.objectContaining({ structuredContent: expect.objectContaining({ data: [] }) }) }),
    ]);
  });

  it('caps a 2026-07-28 answer as a 2025 batch’s call: past the response limit, the refusal comes in its place', async () => {
    const { store } = db();
    const maxResponseBytes = 64 * 1024;
    const endpoint = createMcpEndpoint({
      sources: { contacts: store.contacts, contactUrl: (id) => id, serviceKey: serviceKeyFrom(store.oauth), retentionMs: DAY_MS },
      maxResponseBytes,
      onRejected: (error) => expect.fail(String(error)),
    });
    const caller = {
      ownerId,
      onError: (error: unknown) => expect.fail(String(error)),
      admitCall: async () => ({ allowed: true }) as const,
    };
    const send = (request: ReturnType<typeof modernRequest>) =>
      endpoint(
        new Request(`${baseUrl}/mcp`, {
          method: 'POST',
          headers: { accept: 'application/json, text/event-stream', 'content-type': 'application/json', ...request.headers },
        }),
        request.body,
        caller,
      );
    const page = await send(modernRequest('resources/read', { uri: CONTACT_CARDS_URI }));
    expect(page.status).toBe(200);
    expect(await page.json()).toEqual({
      jsonrpc: '2.0',
      id: 1,
      error: {
        code: expect.any(Number),
        message: expect.stringContaining(`${RESPONSE_TOO_LARGE_MESSAGE}: one /mcp response holds at most ${maxResponseBytes} bytes`),
      },
    });
    const listed = await send(modernRequest('tools/call', { name: 'list_contacts', arguments: { limit: 2 } }));
    expect(((await listed.json()) as { result: Result }).result.structuredContent!.data).toHaveLength(2);
  });

  it('over stdio: the spawned `mcp` command negotiates 2026-07-28, lists the tools in order and runs one', async () => {
    const client = new Client({ name: 'contacts-api-test', version: '1.0.0' }, PIN);
    await client.connect(
      new StdioClientTransport({ command: process.execPath, args: [BIN, 'mcp'], env: mcpEnv(db().databaseUrl, ownerKey), stderr: 'pipe' }),
    );
    try {
      expect(client.getNegotiatedProtocolVersion()).toBe(MODERN_PROTOCOL_VERSION);
      expect((await client.listTools()).tools.map((tool) => tool.name)).toEqual(TOOL_ORDER);
      const searched = await callTool(client, 'search_contacts', { query: 'charles' });
      expect((searched.structuredContent!.data as Contact[]).map((contact) => contact.name)).toEqual(['Charles Babbage']);
    } finally {
      await client.close();
    }
  });

  it('a v1 SDK client still negotiates 2025-11-25 on the same URL, with the same tools in the same order; each 2025 revision gets itself, in JSON', async () => {
    const client = new V1Client({ name: 'contacts-api-test', version: '1.0.0' });
    await client.connect(new V1HttpTransport(new URL(`${baseUrl}/mcp`), { requestInit: { headers: bearer(ownerKey) } }));
    try {
      expect(client.getServerVersion()).toMatchObject({ name: 'contacts-api' });
      const { tools, ...rest } = await client.listTools();
      expect(tools.map((tool) => tool.name)).toEqual(TOOL_ORDER);
      expect(rest).not.toHaveProperty('ttlMs');
      for (const protocolVersion of ['2025-11-25', '2025-06-18', '2025-03-26']) {
        const initialize = await postMcp(app, ownerKey, {
          jsonrpc: '2.0',
          id: 1,
          method: 'initialize',
          params: { protocolVersion, capabilities: {}, clientInfo: { name: 'raw', version: '1' } },
        });
        expect(initialize.headers['content-type'], protocolVersion).toMatch(/^application\/json/);
        expect(initialize.json(), protocolVersion).toMatchObject({ result: { protocolVersion } });
      }
    } finally {
      await client.close();
    }
  });
});
