import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { createMcpHandler, McpServer, type McpHttpHandler } from '@modelcontextprotocol/server';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AuthError } from '../../src/auth/authenticator.js';
import type { Contact } from '../../src/domain/contact.js';
import { MCP_CACHE_HINTS } from '../../src/mcp/cache-hints.js';
import { contactUri, registerContactResources, RESOURCE_PAGE_SIZE } from '../../src/mcp/contact-resources.js';
import { RESULT_BUDGET_BYTES } from '../../src/mcp/result-budget.js';
import type { Store, User } from '../../src/store/store.js';
import { serviceKeyFrom } from '../../src/web/service-key.js';
import { buildTestApp } from '../support/app.js';
import { describeEachBackend } from '../support/backends.js';
import { listContacts } from '../support/requests.js';
import { selfContactId } from '../support/self-contact.js';
import { overrideStore } from '../support/store-override.js';
import { contactRecord, createKey, createUser, importNumberedContacts } from '../support/seed.js';

const UNKNOWN_ID = '0190a1b2-0000-7000-8000-000000000000';
const INVALID_PARAMS = -32602;
/** More than two pages, so that a walk crosses a page boundary twice and ends on a short page. */
const NUMBERED = 2 * RESOURCE_PAGE_SIZE + 37;

const MODES = [
  { name: '2026-07-28 (pinned)', options: { versionNegotiation: { mode: { pin: '2026-07-28' as const } } }, modern: true },
  { name: 'the client’s default (2025)', options: {}, modern: false },
];

/** A resource with a fixed URI beside the contacts, as an MCP Apps page is. */
const CARDS_PAGE = { uri: 'ui://contacts/cards.html', name: 'contact-cards', mimeType: 'text/html;profile=mcp-app' };

/** A JSON-RPC exchange as the client saw it on the wire. */
interface Exchange {
  method: string;
  params: Record<string, unknown> | undefined;
  response: { result?: Record<string, unknown>; error?: { code: number; message: string } } | undefined;
  bytes: number;
}

/** The JSON-RPC answer in a response body: JSON, or the data of a server-sent event (the 2025 stateless fallback's). */
function answerOf(body: string): Exchange['response'] {
  const json = body.startsWith('{')
    ? body
    : body
        .split('\n')
        .find((line) => line.startsWith('data: '))
        ?.slice('data: '.length);
  return json === undefined ? undefined : (JSON.parse(json) as Exchange['response']);
}

/** One page of resources/list, as sent: the client's listResources() follows every nextCursor when given none. */
function listPage(client: Client, cursor?: string) {
  return client.request({ method: 'resources/list', params: cursor === undefined ? {} : { cursor } });
}

describeEachBackend('MCP contact resources', (db) => {
  let app: FastifyInstance;
  let owner: User;
  let other: User;
  let ownerKey: string;
  /** The owner's listing as GET /api/v1/contacts gives it, every page. */
  let restListing: Contact[];
  let ada: Contact;
  let duplicateId: string;
  let large: Contact;
  let otherContactId: string;
  let selfId: string;
  const unexpected: unknown[] = [];

  const handlers: McpHttpHandler[] = [];
  /** An MCP endpoint with the contact resources of `ownerOf`'s owner; `withCardsPage` adds a resource with a fixed URI. */
  function handlerFor(ownerOf: () => Promise<string>, options: { store?: Store; withCardsPage?: boolean } = {}): McpHttpHandler {
    const store = options.store ?? db().store;
    const serviceKey = serviceKeyFrom(store.oauth);
    const handler = createMcpHandler(
      () => {
        const server = new McpServer({ name: 'contacts-resources-test', version: '1.0.0' });
        registerContactResources(server, {
          contacts: store.contacts,
          owner: ownerOf,
          onError: (error) => unexpected.push(error),
          serviceKey,
          ...(options.withCardsPage ? { fixedResources: [CARDS_PAGE] } : {}),
        });
        if (options.withCardsPage) {
          server.registerResource(CARDS_PAGE.name, CARDS_PAGE.uri, { mimeType: CARDS_PAGE.mimeType }, (uri) => ({
            contents: [{ uri: uri.href, mimeType: CARDS_PAGE.mimeType, text: '<!doctype html>' }],
          }));
        }
        return server;
      },
      { responseMode: 'json' },
    );
    handlers.push(handler);
    return handler;
  }

  /** A client of `handler` in `mode`, and the exchanges it had. */
  async function connect(handler: McpHttpHandler, mode: (typeof MODES)[number]) {
    const exchanges: Exchange[] = [];
    const transport = new StreamableHTTPClientTransport(new URL('http://contacts.test/mcp'), {
      fetch: async (url, init) => {
        const response = await handler.fetch(new Request(url, init));
        const body = await response.clone().text();
        const request =
          typeof init?.body === 'string' ? (JSON.parse(init.body) as { method?: string; params?: Record<string, unknown> }) : {};
        if (request.method !== undefined) {
          const answer = answerOf(body);
          exchanges.push({ method: request.method, params: request.params, response: answer, bytes: Buffer.byteLength(body) });
        }
        return response;
      },
    });
    const client = new Client({ name: 'contacts-resources-test', version: '1.0.0' }, mode.options);
    await client.connect(transport);
    return { client, exchanges };
  }

  beforeAll(async () => {
    const { store } = db();
    owner = await createUser(store);
    other = await createUser(store);
    ownerKey = (await createKey(store, owner.id)).key;
    await store.contacts.importContacts(owner.id, [
      contactRecord({
        name: 'Ada Lovelace',
        email: 'ada@example.com',
        title: 'Analyst',
        company: 'Analytical Engines',
        tags: ['math'],
        enrichment: { source: 'test' },
        created_at: '2023-01-01T00:00:00.000Z',
      }),
      contactRecord({ name: 'Ada Duplicate', created_at: '2023-01-02T00:00:00.000Z' }),
      contactRecord({
        name: 'Large Notes',
        enrichment: { notes: 'n'.repeat(RESULT_BUDGET_BYTES) },
        created_at: '2023-01-03T00:00:00.000Z',
      }),
    ]);
    await importNumberedContacts(store, owner.id, NUMBERED, 'Person');
    await store.contacts.importContacts(other.id, [contactRecord({ name: 'Ada Other', created_at: '2023-01-01T12:00:00.000Z' })]);
    const byName = async (ownerId: string, name: string) =>
      (await store.contacts.search(ownerId, name, 1))[0] ?? expect.fail(`no contact named ${name}`);
    duplicateId = (await byName(owner.id, 'Ada Duplicate')).id;
    const survivorId = (await byName(owner.id, 'Ada Lovelace')).id;
    await store.contacts.merge(owner.id, duplicateId, survivorId);
    otherContactId = (await byName(other.id, 'Ada Other')).id;
    selfId = await selfContactId(db().databaseUrl, owner.id);

    app = await buildTestApp(store);
    restListing = [];
    for (let offset = 0; ; offset += 100) {
      const page = await listContacts(app, ownerKey, `limit=100&offset=${offset}`);
      const { data, pagination } = page.json<{ data: Contact[]; pagination: { nextOffset: number | null } }>();
      // Each contact's JSON re-serialized is the bytes REST sent, so comparing a read with it compares bytes.
      expect(page.body).toContain(JSON.stringify(data));
      restListing.push(...data);
      if (pagination.nextOffset === null) break;
    }
    ada = restListing.find((contact) => contact.id === survivorId)!;
    large = restListing.find((contact) => contact.name === 'Large Notes')!;
  });
  afterAll(async () => {
    await Promise.all(handlers.map((handler) => handler.close()));
    await app?.close();
    expect(unexpected).toEqual([]);
  });

  for (const mode of MODES) {
    describe(`with a client in ${mode.name}`, () => {
      let client: Client;
      let exchanges: Exchange[];
      let otherClient: Client;

      beforeAll(async () => {
        ({ client, exchanges } = await connect(
          handlerFor(async () => owner.id),
          mode,
        ));
        ({ client: otherClient } = await connect(
          handlerFor(async () => other.id),
          mode,
        ));
        expect(client.getProtocolEra()).toBe(mode.modern ? 'modern' : 'legacy');
      });
      afterAll(async () => {
        await client?.close();
        await otherClient?.close();
      });

      const lastExchange = (method: string) => exchanges.filter((exchange) => exchange.method === method).at(-1)!;

      it('lists the template contacts://contact/{id}, with a name, a title, a description and its media type', async () => {
        const { resourceTemplates } = await client.listResourceTemplates();
        expect(resourceTemplates).toEqual([
          {
            uriTemplate: 'contacts://contact/{id}',
            name: 'contact',
            title: 'Contact',
            description: expect.stringContaining('merged_from'),
            mimeType: 'application/json',
          },
        ]);
        // The listing changes with every import and no notification says so: none is promised.
        expect(client.getServerCapabilities()?.resources).toEqual({});
      });

      it('reads a contact as the JSON GET /api/v1/contacts gives it, byte for byte', async () => {
        for (const contact of [ada, restListing.at(-1)!]) {
          const { contents } = await client.readResource({ uri: contactUri(contact.id) }, { cacheMode: 'bypass' });
          expect(contents).toEqual([{ uri: contactUri(contact.id), mimeType: 'application/json', text: JSON.stringify(contact) }]);
        }
      });

      it('reads a merged duplicate as the contact it was merged into, under that contact’s URI, naming merged_from', async () => {
        const { contents } = await client.readResource({ uri: contactUri(duplicateId) }, { cacheMode: 'bypass' });
        expect(contents).toEqual([
          { uri: contactUri(ada.id), mimeType: 'application/json', text: JSON.stringify(ada), _meta: { merged_from: duplicateId } },
        ]);
      });

      it('refuses another owner’s contact and the owner’s self contact with -32602 and the very message an unknown id gets', async () => {
        const refusal = async (uri: string) => {
          const error = await client.readResource({ uri }, { cacheMode: 'bypass' }).then(
            () => expect.fail(`${uri} was read`),
            (thrown: unknown) => thrown as { code: number; message: string },
          );
          expect(error.code, uri).toBe(INVALID_PARAMS);
          return error.message;
        };
        const unknown = await refusal(contactUri(UNKNOWN_ID));
        expect(unknown).toContain('Contact not found');
        expect(await refusal(contactUri(otherContactId))).toBe(unknown);
        expect(await refusal(contactUri(selfId))).toBe(unknown);
        // The other owner reads it: the id exists, and only for them.
        const { contents } = await otherClient.readResource({ uri: contactUri(otherContactId) }, { cacheMode: 'bypass' });
        expect(JSON.parse((contents[0] as { text: string }).text)).toMatchObject({ id: otherContactId, name: 'Ada Other' });
        expect(await refusal('contacts://contact/not-a-uuid')).toMatch(/Not a contact URI: contacts:\/\/contact\/not-a-uuid;.*UUID/);
      });

      it('walks the whole network once with cursors, in list order, a page at a time', async () => {
        const walked: string[] = [];
        let cursor: string | undefined;
        let pages = 0;
        do {
          const page = await listPage(client, cursor);
          pages += 1;
          expect(page.resources.length).toBeLessThanOrEqual(RESOURCE_PAGE_SIZE);
          walked.push(...page.resources.map((resource) => resource.uri));
          cursor = page.nextCursor;
        } while (cursor !== undefined && pages < 10);
        expect(walked).toEqual(restListing.map((contact) => contactUri(contact.id)));
        expect(pages).toBe(Math.ceil(restListing.length / RESOURCE_PAGE_SIZE));
        // The client's own walk (listResources without a cursor follows every nextCursor) finds the same.
        const aggregated = await client.listResources(undefined, { cacheMode: 'bypass' });
        expect(aggregated.resources.map((resource) => resource.uri)).toEqual(walked);
      });

      it('names each listed contact: name or email, a title with the role, the role as description', async () => {
        const { resources } = await listPage(client);
        expect(resources[0]).toEqual({
          uri: contactUri(ada.id),
          name: 'Ada Lovelace',
          title: 'Ada Lovelace — Analyst, Analytical Engines',
          description: 'Analyst, Analytical Engines',
          mimeType: 'application/json',
        });
        expect(resources[1]).toEqual({
          uri: contactUri(large.id),
          name: 'Large Notes',
          title: 'Large Notes',
          mimeType: 'application/json',
        });
      });

      it('refuses with -32602 a cursor it did not issue, an altered one, and another owner’s', async () => {
        const first = await listPage(client);
        const cursor = first.nextCursor!;
        const [payload = '', signature = ''] = cursor.split('.');
        const altered = `${payload.slice(0, -1)}${payload.endsWith('A') ? 'B' : 'A'}.${signature}`;
        for (const forged of ['not-a-cursor', '', altered, `${payload}.${'A'.repeat(22)}`]) {
          await expect(listPage(client, forged), forged).rejects.toMatchObject({
            code: INVALID_PARAMS,
            message: expect.stringContaining('Invalid cursor'),
          });
        }
        await expect(listPage(otherClient, cursor)).rejects.toMatchObject({ code: INVALID_PARAMS });
      });

      it('keeps a read within the tools’ size budget, naming the fields it left out', async () => {
        const { contents } = await client.readResource({ uri: contactUri(large.id) }, { cacheMode: 'bypass' });
        const { enrichment: _left, ...rest } = large;
        expect(contents).toEqual([
          {
            uri: contactUri(large.id),
            mimeType: 'application/json',
            text: JSON.stringify(rest),
            _meta: { omitted_fields: ['enrichment'] },
          },
        ]);
        expect(lastExchange('resources/read').bytes).toBeLessThan(RESULT_BUDGET_BYTES + 1024);
        await listPage(client);
        expect(lastExchange('resources/list').bytes).toBeLessThan(RESULT_BUDGET_BYTES);
      });

      it(
        mode.modern ? 'marks the listing and the reads private, cached for a minute' : 'sends no cache fields to a 2025 client',
        async () => {
          await listPage(client);
          await client.readResource({ uri: contactUri(ada.id) }, { cacheMode: 'bypass' });
          for (const method of ['resources/list', 'resources/read']) {
            const { result } = lastExchange(method).response!;
            if (mode.modern) expect(result, method).toMatchObject(MCP_CACHE_HINTS[method as 'resources/list' | 'resources/read']);
            else expect(Object.keys(result!), method).not.toContain('ttlMs');
          }
        },
      );
    });
  }

  describe('while the network changes during a walk', () => {
    it('lists every contact once: one merged or deleted behind the cursor shifts nothing, one added comes at the end', async () => {
      const { store } = db();
      const walker = await createUser(store);
      await importNumberedContacts(store, walker.id, RESOURCE_PAGE_SIZE + 20, 'Walker');
      const { client } = await connect(
        handlerFor(async () => walker.id),
        MODES[0]!,
      );
      const first = await listPage(client);
      const before = (await store.contacts.listPage(walker.id, { limit: 200, offset: 0 })).contacts;
      // Two contacts the first page already gave leave the listing, so offset 100 would now skip two.
      await store.contacts.merge(walker.id, before[3]!.id, before[4]!.id);
      await store.contacts.delete(walker.id, [before[5]!.id]);
      await store.contacts.importContacts(walker.id, [contactRecord({ name: 'Walker Late', created_at: new Date().toISOString() })]);
      const second = await listPage(client, first.nextCursor);
      expect(second.nextCursor).toBeUndefined();
      const walked = [...first.resources, ...second.resources].map((resource) => resource.name);
      expect(walked).toEqual([...before.map((contact) => contact.name), 'Walker Late']);
      await client.close();
    });
  });

  describe('beside a resource with a fixed URI', () => {
    it('lists it first, on the first page only, and still reads it', async () => {
      const { client } = await connect(
        handlerFor(async () => owner.id, { withCardsPage: true }),
        MODES[0]!,
      );
      const first = await listPage(client);
      expect(first.resources[0]).toEqual(CARDS_PAGE);
      const second = await listPage(client, first.nextCursor);
      expect(second.resources.map((resource) => resource.uri)).not.toContain(CARDS_PAGE.uri);
      const { resources } = await client.listResources();
      expect(resources.map((resource) => resource.uri)).toEqual([CARDS_PAGE.uri, ...restListing.map((contact) => contactUri(contact.id))]);
      const { contents } = await client.readResource({ uri: CARDS_PAGE.uri });
      expect(contents).toEqual([{ uri: CARDS_PAGE.uri, mimeType: CARDS_PAGE.mimeType, text: '<!doctype html>' }]);
      await client.close();
    });
  });

  describe('when the caller is refused or the store fails', () => {
    it('answers a revoked key with -32600 and its public message, and a failure with -32603 alone', async () => {
      const refused = handlerFor(async () => {
        throw new AuthError(401, 'Invalid or inactive API key', 'revoked');
      });
      const { client } = await connect(refused, MODES[0]!);
      await expect(client.readResource({ uri: contactUri(ada.id) })).rejects.toMatchObject({
        code: -32600,
        message: expect.stringContaining('Invalid or inactive API key'),
      });
      await expect(client.listResources({})).rejects.toMatchObject({ code: -32600 });
      await client.close();

      const broken = new Error('connection reset by peer');
      const failing = handlerFor(async () => owner.id, {
        store: overrideStore(db().store, { contacts: { get: () => Promise.reject(broken) } }),
      });
      const { client: failingClient } = await connect(failing, MODES[0]!);
      const error = await failingClient.readResource({ uri: contactUri(ada.id) }).catch((thrown: unknown) => thrown);
      expect(error).toMatchObject({ code: -32603, message: expect.stringContaining('Internal server error') });
      expect((error as Error).message).not.toContain('connection reset');
      await failingClient.close();
      expect(unexpected.splice(0)).toEqual([broken]);
    });
  });
});
