import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RATE_LIMIT_WINDOW_MS } from '../../src/domain/rate-limit.js';
import { REQUEST_TIMEOUT_MESSAGE } from '../../src/web/errors.js';
import { MCP_BODY_LIMIT_BYTES, MCP_BUSY_MESSAGE, MCP_RESPONSE_LIMIT_BYTES } from '../../src/mcp/route.js';
import { MAX_BATCH_MESSAGES } from '../../src/mcp/batches.js';
import { CALL_RESERVATION_BYTES, OTHER_RESERVATION_BYTES } from '../../src/mcp/inflight-bytes.js';
import { RESPONSE_TOO_LARGE_MESSAGE } from '../../src/mcp/metered-transport.js';
import { RESULT_BUDGET_BYTES } from '../../src/mcp/result-budget.js';
import { createMemoryCounter } from '../../src/rate-limit/memory-counter.js';
import type { Store } from '../../src/store/store.js';
import { buildTestApp } from '../support/app.js';
import { describeEachBackend } from '../support/backends.js';
import { postMcp } from '../support/mcp-request.js';
import { contactRecord, createKey, createUser } from '../support/seed.js';
import { overrideStore } from '../support/store-override.js';

const LIMIT = 5;
type Answer = { id: number; result?: CallToolResult & { tools?: unknown[] }; error?: { code: number; message: string } };

const call = (id: number, name: string, args: Record<string, unknown> = {}) => ({
  jsonrpc: '2.0',
  id,
  method: 'tools/call',
  params: { name, arguments: args },
});
const listAll = (id: number) => call(id, 'list_contacts', { limit: 100 });
const request = (id: number, method: string, params?: Record<string, unknown>) => ({ jsonrpc: '2.0', id, method, params });
const initialize = (id: number, protocolVersion: string) =>
  request(id, 'initialize', { protocolVersion, capabilities: {}, clientInfo: { name: 'test', version: '1' } });
const textOf = (answer: Answer): string => (answer.result!.content[0] as { text: string }).text;

/** `count` contacts whose description holds `descriptionLength` characters of words. */
async function importBigContacts(store: Store, ownerId: string, count: number, descriptionLength: number): Promise<void> {
  const description = 'enrichment notes '.repeat(Math.ceil(descriptionLength / 17)).slice(0, descriptionLength);
  const start = Date.parse('2024-01-01T00:00:00.000Z');
  await store.contacts.importContacts(
    ownerId,
    Array.from({ length: count }, (_, i) =>
      contactRecord({ name: `Big ${i + 1}`, description, created_at: new Date(start + i).toISOString() }),
    ),
  );
}

describeEachBackend('MCP limits', (db) => {
  let open: FastifyInstance;
  let limited: FastifyInstance;
  let ownerId: string;
  let hugeOwnerKey: string;
  let pagesListed = 0;
  const clock = { now: 1_000_000 };

  const post = (app: FastifyInstance, key: string, body: unknown, protocolVersion?: string) =>
    postMcp(app, key, body, protocolVersion === undefined ? {} : { 'mcp-protocol-version': protocolVersion });
  const newKey = async () => (await createKey(db().store, ownerId)).key;

  beforeAll(async () => {
    const { store } = db();
    ownerId = (await createUser(store)).id;
    // About 3.4 KB a contact: a page of 100 is a third of the response cap.
    await importBigContacts(store, ownerId, 100, 3_000);
    const hugeOwner = await createUser(store);
    // About 12 KB a contact: a page of 100 is over the cap, a page of 50 under it.
    await importBigContacts(store, hugeOwner.id, 100, 12_000);
    hugeOwnerKey = (await createKey(store, hugeOwner.id)).key;
    const counting = overrideStore(store, {
      contacts: {
        listPage: (...args) => {
          pagesListed += 1;
          return store.contacts.listPage(...args);
        },
      },
    });
    open = await buildTestApp(counting);
    const counter = createMemoryCounter({ windowMs: RATE_LIMIT_WINDOW_MS, now: () => clock.now });
    limited = await buildTestApp(counting, { config: { rateLimit: { perMinute: LIMIT } }, requestCounter: counter });
  });
  afterAll(async () => {
    await open?.close();
    await limited?.close();
  });

  describe('batches by protocol version', () => {
    it('refuses a batch on 2025-06-18 and 2025-11-25 with a JSON-RPC Invalid Request, running none of it', async () => {
      const key = await newKey();
      for (const version of ['2025-06-18', '2025-11-25']) {
        const before = pagesListed;
        const response = await post(open, key, [listAll(1), listAll(2)], version);
        expect(response.statusCode, version).toBe(400);
        expect(response.json(), version).toEqual({
          jsonrpc: '2.0',
          id: null,
          error: {
            code: -32600,
            message: `Invalid Request: protocol version ${version} does not allow JSON-RPC batches (removed in 2025-06-18); send one message per request`,
          },
        });
        expect(pagesListed, version).toBe(before);
      }
    });

    it('takes the version of an initialize request in the batch over the header', async () => {
      const key = await newKey();
      const refused = await post(open, key, [initialize(1, '2025-06-18')], '2025-03-26');
      expect(refused.statusCode).toBe(400);
      expect(refused.json()).toMatchObject({ error: { code: -32600, message: expect.stringContaining('protocol version 2025-06-18') } });
      const allowed = await post(open, key, [initialize(1, '2025-03-26')], '2025-11-25');
      expect(allowed.statusCode).toBe(200);
      // The SDK answers a batch of one with a bare object rather than an array of one.
      expect([allowed.json()].flat()[0]).toMatchObject({ id: 1, result: { protocolVersion: '2025-03-26' } });
    });

    it('answers a batch on 2025-03-26, or naming no version, message by message in order', async () => {
      const key = await newKey();
      for (const version of ['2025-03-26', undefined]) {
        const batch = [
          call(1, 'list_contacts', { limit: 2 }),
          call(2, 'get_contact', { id: '0190a1b2-0000-7000-8000-000000000000' }),
          request(3, 'tools/list'),
        ];
        const response = await post(open, key, batch, version);
        expect(response.statusCode, version).toBe(200);
        const answers = response.json() as Answer[];
        expect(answers.map((answer) => answer.id)).toEqual([1, 2, 3]);
        expect(textOf(answers[0]!).split('\n')[0]).toBe('Contacts 1–2 of 100; the next page starts at offset 2.');
        expect(answers[1]!.result).toEqual({ isError: true, content: [{ type: 'text', text: 'Contact not found' }] });
        expect(answers[2]!.result!.tools).toHaveLength(6);
      }
    });

    it(`refuses a batch of more than ${MAX_BATCH_MESSAGES} messages with 400, and answers one of ${MAX_BATCH_MESSAGES}`, async () => {
      const key = await newKey();
      const pings = (count: number) => Array.from({ length: count }, (_, i) => request(i + 1, 'ping'));
      const refused = await post(open, key, pings(MAX_BATCH_MESSAGES + 1), '2025-03-26');
      expect(refused.statusCode).toBe(400);
      expect(refused.json()).toEqual({
        jsonrpc: '2.0',
        id: null,
        error: { code: -32600, message: `Invalid Request: a batch may hold at most ${MAX_BATCH_MESSAGES} messages; this one holds 21` },
      });
      const allowed = await post(open, key, pings(MAX_BATCH_MESSAGES), '2025-03-26');
      expect(allowed.statusCode).toBe(200);
      expect(allowed.json()).toHaveLength(MAX_BATCH_MESSAGES);
    });
  });

  describe('rate limit per tool call', () => {
    it(`with a limit of ${LIMIT}, a batch of 10 tool calls runs ${LIMIT} and refuses the rest with Retry-After; the next request is a 429`, async () => {
      const key = await newKey();
      const before = pagesListed;
      const response = await post(
        limited,
        key,
        Array.from({ length: 10 }, (_, i) => call(i + 1, 'list_contacts', { limit: 1 })),
        '2025-03-26',
      );
      expect(response.statusCode).toBe(200);
      const answers = response.json() as Answer[];
      expect(answers.slice(0, LIMIT).map((answer) => answer.result!.isError ?? false)).toEqual(Array(LIMIT).fill(false));
      for (const answer of answers.slice(LIMIT)) {
        expect(answer.result).toEqual({ isError: true, content: [{ type: 'text', text: 'Rate limit exceeded: retry after 60 seconds' }] });
      }
      expect(pagesListed - before).toBe(LIMIT);
      expect(response.headers['x-ratelimit-remaining']).toBe('0');
      expect(response.headers.ratelimit).toBe('"default";r=0;t=60');

      clock.now += 20_000;
      const next = await post(limited, key, call(1, 'list_contacts'), '2025-03-26');
      expect(next.statusCode).toBe(429);
      expect(next.json()).toEqual({ error: 'Rate limit exceeded' });
      expect(next.headers['retry-after']).toBe('40');
    });

    it('a request spends one unit, which pays for its first tool call; messages other than tool calls spend nothing more', async () => {
      const key = await newKey();
      const noCalls = await post(limited, key, [request(1, 'tools/list'), request(2, 'ping')], '2025-03-26');
      expect(noCalls.headers['x-ratelimit-remaining']).toBe(String(LIMIT - 1));
      const oneCall = await post(limited, key, [call(1, 'list_contacts', { limit: 1 }), request(2, 'ping')], '2025-03-26');
      expect(oneCall.headers['x-ratelimit-remaining']).toBe(String(LIMIT - 2));
      const twoCalls = await post(limited, key, [call(1, 'list_contacts', { limit: 1 }), call(2, 'get_contact', { id: 'x' })]);
      expect(twoCalls.headers['x-ratelimit-remaining']).toBe(String(LIMIT - 4));
    });

    it('counts resources/read and resources/list as calls, as tools/call', async () => {
      const key = await newKey();
      const batch = [
        call(1, 'list_contacts', { limit: 1 }),
        request(2, 'resources/list'),
        request(3, 'resources/read', { uri: 'contacts://contact/0190a1b2-0000-7000-8000-000000000000' }),
      ];
      const response = await post(limited, key, batch, '2025-03-26');
      expect(response.statusCode).toBe(200);
      expect(response.headers['x-ratelimit-remaining']).toBe(String(LIMIT - 3));
    });

    it('lets every call of a batch through while the counter fails, as it lets requests through', async () => {
      let hits = 0;
      const failing = await buildTestApp(db().store, {
        config: { rateLimit: { perMinute: 1 } },
        requestCounter: {
          kind: 'redis',
          hit: async () => {
            hits += 1;
            throw new Error('redis down');
          },
          peek: async () => {
            throw new Error('redis down');
          },
          close: async () => undefined,
        },
      });
      try {
        const response = await post(
          failing,
          await newKey(),
          Array.from({ length: 4 }, (_, i) => call(i + 1, 'list_contacts', { limit: 1 })),
        );
        expect(response.statusCode).toBe(200);
        expect((response.json() as Answer[]).map((answer) => answer.result!.isError ?? false)).toEqual([false, false, false, false]);
        expect(hits).toBe(4);
        expect(response.headers['x-ratelimit-limit']).toBe('1');
      } finally {
        await failing.close();
      }
    });
  });

  describe('response size', () => {
    it(`never answers more than ${MCP_RESPONSE_LIMIT_BYTES} bytes: the calls past the cap get an error without running`, async () => {
      const key = await newKey();
      const batch = [
        ...Array.from({ length: MAX_BATCH_MESSAGES - 1 }, (_, i) => listAll(i + 1)),
        request(MAX_BATCH_MESSAGES, 'tools/list'),
      ];
      const before = pagesListed;
      const response = await post(open, key, batch, '2025-03-26');
      expect(response.statusCode).toBe(200);
      expect(response.rawPayload.length).toBeLessThanOrEqual(MCP_RESPONSE_LIMIT_BYTES);
      const answers = response.json() as Answer[];
      expect(answers.map((answer) => answer.id)).toEqual(batch.map((message) => message.id));
      const answered = answers.filter((answer) => answer.result?.structuredContent !== undefined);
      expect(answered.length).toBeGreaterThan(0);
      for (const answer of answered) expect((answer.result!.structuredContent as { data: unknown[] }).data.length).toBeGreaterThan(0);
      // Answers that fit come first; the first that did not fit ran, every later one was refused without running.
      expect(answers.slice(0, answered.length)).toEqual(answered);
      expect(pagesListed - before).toBe(answered.length + 1);
      const refusedCalls = answers.slice(answered.length, -1);
      expect(refusedCalls.length).toBeGreaterThan(0);
      for (const answer of refusedCalls) {
        expect(answer.result!.isError).toBe(true);
        expect(textOf(answer)).toMatch(
          new RegExp(`^${RESPONSE_TOO_LARGE_MESSAGE}: one /mcp response holds at most ${MCP_RESPONSE_LIMIT_BYTES} bytes`),
        );
      }
      expect(answers.at(-1)!.error).toEqual({ code: -32000, message: expect.stringMatching(new RegExp(`^${RESPONSE_TOO_LARGE_MESSAGE}`)) });
    });

    it('cuts a page to the result budget, says so, and continues at the first contact left out', async () => {
      const cut = (await post(open, hugeOwnerKey, listAll(1), '2025-11-25')).json() as Answer;
      const first = cut.result!.structuredContent as { data: { name: string }[]; pagination: { nextOffset: number }; truncated: boolean };
      expect(first.truncated).toBe(true);
      expect(first.data.length).toBeGreaterThan(0);
      expect(first.data.length).toBeLessThan(100);
      expect(first.pagination.nextOffset).toBe(first.data.length);
      expect(JSON.stringify(first).length).toBeLessThanOrEqual(RESULT_BUDGET_BYTES + 200);
      expect(textOf(cut)).toContain(`(cut from 100 to fit the size budget); the next page starts at offset ${first.data.length}.`);
      const next = (
        await post(open, hugeOwnerKey, call(2, 'list_contacts', { limit: 100, offset: first.pagination.nextOffset }), '2025-11-25')
      ).json() as Answer;
      expect((next.result!.structuredContent as { data: { name: string }[] }).data[0]!.name).toBe(`Big ${first.data.length + 1}`);
    });
  });

  describe('work in flight', () => {
    it('answers 503 with Retry-After, running nothing, while the answers in flight hold the reservation; then runs again', async () => {
      let openGate = () => undefined as void;
      const gate = new Promise<void>((resolve) => (openGate = resolve));
      let entered = () => undefined as void;
      const inside = new Promise<void>((resolve) => (entered = resolve));
      let held = true;
      const gated = overrideStore(db().store, {
        contacts: {
          listPage: async (...args) => {
            pagesListed += 1;
            if (held) {
              entered();
              await gate;
            }
            return db().store.contacts.listPage(...args);
          },
        },
      });
      // Room for the batch of two calls and a ping beside it, not for a third call.
      // MCP_INFLIGHT_MB is in MiB: a fraction of one holds exactly two calls' reservations.
      const app = await buildTestApp(gated, {
        config: { mcpInflightMb: (2 * CALL_RESERVATION_BYTES + OTHER_RESERVATION_BYTES) / (1024 * 1024) },
      });
      try {
        const key = await newKey();
        const running = post(app, key, [call(1, 'list_contacts', { limit: 1 }), call(2, 'list_contacts', { limit: 1 })], '2025-03-26');
        await inside;
        const before = pagesListed;
        const busy = await post(app, key, call(3, 'list_contacts', { limit: 1 }), '2025-11-25');
        expect(busy.statusCode).toBe(503);
        expect(busy.headers['retry-after']).toBe('1');
        expect(busy.json()).toEqual({ jsonrpc: '2.0', id: null, error: { code: -32000, message: MCP_BUSY_MESSAGE } });
        expect(pagesListed).toBe(before);
        // A ping reserves less than a call: it still fits beside the batch.
        expect((await post(app, key, request(4, 'ping'), '2025-11-25')).statusCode).toBe(200);
        held = false;
        openGate();
        expect((await running).statusCode).toBe(200);
        expect((await post(app, key, call(5, 'list_contacts', { limit: 1 }), '2025-11-25')).statusCode).toBe(200);
      } finally {
        openGate();
        await app.close();
      }
    });
  });

  it('answers 503 to a request not answered within REQUEST_TIMEOUT_MS, as every route does, and gives its reservation back', async () => {
    let openGate = () => undefined as void;
    const gate = new Promise<void>((resolve) => (openGate = resolve));
    const hung = overrideStore(db().store, {
      contacts: {
        listPage: async (...args) => {
          await gate;
          return db().store.contacts.listPage(...args);
        },
      },
    });
    // Room for one call at a time: the next one runs only once the first gave its reservation back.
    const app = await buildTestApp(hung, { config: { requestTimeoutMs: 300, mcpInflightMb: CALL_RESERVATION_BYTES / (1024 * 1024) } });
    try {
      const key = await newKey();
      const late = await post(app, key, call(1, 'list_contacts', { limit: 1 }), '2025-11-25');
      expect(late.statusCode).toBe(503);
      expect(late.json()).toEqual({ error: REQUEST_TIMEOUT_MESSAGE });
      openGate();
      expect((await post(app, key, call(2, 'list_contacts', { limit: 1 }), '2025-11-25')).statusCode).toBe(200);
    } finally {
      openGate();
      await app.close();
    }
  });

  it(`refuses a request body over ${MCP_BODY_LIMIT_BYTES} bytes with 413 before reading it as JSON-RPC`, async () => {
    const key = await newKey();
    const response = await post(open, key, call(1, 'search_contacts', { query: 'x'.repeat(MCP_BODY_LIMIT_BYTES) }), '2025-11-25');
    expect(response.statusCode).toBe(413);
    expect(response.json()).toHaveProperty('error');
  });
});
