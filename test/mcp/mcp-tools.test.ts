import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ContactSchema, type Contact } from '../../src/domain/contact.js';
import type { User } from '../../src/store/store.js';
import { bearer, buildTestApp } from '../support/app.js';
import { describeEachBackend } from '../support/backends.js';
import { BIN, mcpEnv } from '../support/cli.js';
import { listenOnFreePort } from '../support/listen.js';
import { fetchContacts } from '../support/requests.js';
import { contactRecord, createKey, createUser } from '../support/seed.js';
import { selfContactId } from '../support/self-contact.js';

const TRANSPORTS = ['streamable http', 'stdio'] as const;
type TransportName = (typeof TRANSPORTS)[number];
const NOT_FOUND = 'Contact not found';

/** Text of a tool result's first text block: its summary, or an error's message. */
const textOf = (result: CallToolResult): string => (result.content[0] as { text: string }).text;
/** A contact as the tools return it by default: without the large free-form fields. */
const compact = ({ enrichment: _enrichment, research_data: _research, ...rest }: Contact) => rest;
const ALL_FIELDS = Object.keys(ContactSchema.properties);
const UNKNOWN_ID = '0190a1b2-0000-7000-8000-000000000000';

describeEachBackend('MCP tools', (db) => {
  let app: FastifyInstance;
  let baseUrl: string;
  let owner: User;
  let ownerKey: string;
  let otherKey: string;
  let owned: Contact[];
  let otherOwned: Contact[];
  let duplicateId: string;
  let selfId: string;

  async function connect(transport: TransportName, key: string): Promise<Client> {
    const client = new Client({ name: 'contacts-api-test', version: '1.0.0' });
    if (transport === 'stdio') {
      await client.connect(
        new StdioClientTransport({
          command: process.execPath,
          args: [BIN, 'mcp'],
          env: mcpEnv(db().databaseUrl, key, { CONTACT_URL_TEMPLATE: 'https://app.example.com/contacts/{id}' }),
          stderr: 'pipe',
        }),
      );
    } else {
      await client.connect(new StreamableHTTPClientTransport(new URL(`${baseUrl}/mcp`), { requestInit: { headers: bearer(key) } }));
    }
    return client;
  }

  const call = (client: Client, name: string, args: Record<string, unknown> = {}) =>
    client.callTool({ name, arguments: args }) as Promise<CallToolResult>;

  beforeAll(async () => {
    const { store } = db();
    owner = await createUser(store, 'pro', 'Owner Self');
    const other = await createUser(store);
    ownerKey = (await createKey(store, owner.id)).key;
    otherKey = (await createKey(store, other.id)).key;
    const base = Date.parse('2024-06-01T00:00:00.000Z');
    const at = (minute: number) => new Date(base + minute * 60_000).toISOString();
    // The two users' contacts interleave in time.
    await store.contacts.importContacts(owner.id, [
      contactRecord({ name: 'Ada Lovelace', email: 'ada@example.com', company: 'Analytical Engines', tags: ['math'], created_at: at(0) }),
      contactRecord({ name: 'Charles Babbage', title: 'Inventor', created_at: at(2) }),
    ]);
    await store.contacts.importContacts(other.id, [
      contactRecord({ name: 'Ada Other', email: 'ada.other@example.com', created_at: at(1) }),
      contactRecord({ name: 'Grace Hopper', created_at: at(3) }),
    ]);
    await store.contacts.importContacts(
      owner.id,
      Array.from({ length: 12 }, (_, i) => contactRecord({ name: `Person ${String(i + 1).padStart(2, '0')}`, created_at: at(4 + i) })),
    );
    await store.contacts.importContacts(owner.id, [contactRecord({ name: 'Ada Duplicate', created_at: at(30) })]);
    const listed = (await store.contacts.listPage(owner.id, { limit: 100, offset: 0 })).contacts;
    duplicateId = listed.find((contact) => contact.name === 'Ada Duplicate')!.id;
    await store.contacts.merge(owner.id, duplicateId, listed[0]!.id);
    owned = (await store.contacts.listPage(owner.id, { limit: 100, offset: 0 })).contacts;
    otherOwned = (await store.contacts.listPage(other.id, { limit: 100, offset: 0 })).contacts;
    selfId = await selfContactId(db().databaseUrl, owner.id);
    app = await buildTestApp(store, { config: { contactUrlTemplate: 'https://app.example.com/contacts/{id}' } });
    ({ origin: baseUrl } = await listenOnFreePort(app));
  });
  afterAll(async () => {
    await app?.close();
  });

  for (const transport of TRANSPORTS) {
    describe(`over ${transport}`, () => {
      let client: Client;
      let otherClient: Client;

      beforeAll(async () => {
        client = await connect(transport, ownerKey);
        otherClient = await connect(transport, otherKey);
      });
      afterAll(async () => {
        await client?.close();
        await otherClient?.close();
      });

      it('lists six read-only tools, each with bounded inputs and a portable output schema', async () => {
        const { tools } = await client.listTools();
        expect(tools.map((tool) => tool.name).sort()).toEqual([
          'fetch',
          'get_contact',
          'list_changes',
          'list_contacts',
          'search',
          'search_contacts',
        ]);
        for (const tool of tools) {
          expect(tool.annotations, tool.name).toMatchObject({ readOnlyHint: true, idempotentHint: true, openWorldHint: false });
          expect(tool.description, tool.name).toBeTruthy();
          expect(tool.inputSchema.type).toBe('object');
          expect(tool.inputSchema.additionalProperties, `${tool.name} refuses unknown arguments`).toBe(false);
          expect(tool.outputSchema?.type).toBe('object');
          // What the Inspector's --strict warns about: a `type` array, and a schema with no keyword at all.
          expect(JSON.stringify(tool.outputSchema), tool.name).not.toMatch(/"type":\[/);
          expect(JSON.stringify(tool.outputSchema), tool.name).not.toMatch(/"(additionalProperties|items)":\{\}/);
        }
        const byName = Object.fromEntries(tools.map((tool) => [tool.name, tool]));
        expect(byName.list_contacts!.inputSchema.properties).toMatchObject({
          limit: { type: 'integer', minimum: 1, maximum: 100, default: 50 },
          offset: { type: 'integer', minimum: 0, maximum: 2147483647, default: 0 },
          fields: { type: 'array', minItems: 1, items: { enum: ALL_FIELDS } },
        });
        expect(byName.get_contact!.inputSchema.required).toEqual(['id']);
        expect(byName.get_contact!.inputSchema.properties).toMatchObject({ id: { type: 'string', format: 'uuid' } });
        expect(byName.fetch!.inputSchema.properties).toMatchObject({ id: { type: 'string', format: 'uuid' } });
        expect(byName.search_contacts!.inputSchema.required).toEqual(['query']);
        expect(byName.search_contacts!.inputSchema.properties).toMatchObject({
          query: { type: 'string', minLength: 1, maxLength: 200 },
          limit: { minimum: 1, maximum: 50, default: 10 },
        });
        expect(byName.search!.inputSchema.properties).toMatchObject({ query: { type: 'string', minLength: 1, maxLength: 200 } });
      });

      it('describes contacts with the REST API’s Contact fields, so the two cannot drift; `fields` chooses which come', async () => {
        const { tools } = await client.listTools();
        const contactSchema = (tools.find((tool) => tool.name === 'get_contact')!.outputSchema!.properties as any).contact;
        expect(Object.keys(contactSchema.properties)).toEqual(ALL_FIELDS);
        expect(contactSchema.required ?? []).toEqual([]);
      });

      it('puts the whole result in the text as JSON too, after a summary, for clients that show only text', async () => {
        for (const [name, args] of [
          ['list_contacts', { limit: 3 }],
          ['get_contact', { id: owned[0]!.id }],
          ['search_contacts', { query: 'ada' }],
        ] as const) {
          const result = await call(client, name, args);
          expect(result.content, name).toHaveLength(2);
          expect(JSON.parse((result.content[1] as { text: string }).text), name).toEqual(result.structuredContent);
        }
      });

      describe('list_contacts', () => {
        it('returns the same page, order, exclusions and pagination as GET /api/v1/contacts', async () => {
          for (const [limit, offset] of [
            [5, 0],
            [5, 10],
            [100, 0],
            [3, 1000],
          ] as const) {
            const result = await call(client, 'list_contacts', { limit, offset, fields: ALL_FIELDS });
            const rest = await fetchContacts(baseUrl, ownerKey, `limit=${limit}&offset=${offset}`);
            expect(result.isError).toBeFalsy();
            expect(result.structuredContent).toEqual({ ...((await rest.json()) as object), truncated: false });
          }
        });

        it('defaults to limit 50, offset 0, excludes the merged duplicate and the self row, and renders a short text', async () => {
          const result = await call(client, 'list_contacts');
          const { data, pagination } = result.structuredContent as { data: Contact[]; pagination: object };
          expect(pagination).toEqual({ limit: 50, offset: 0, total: 14, nextOffset: null });
          expect(data).toEqual(owned.map(compact));
          expect(data.map((contact) => contact.id)).not.toContain(duplicateId);
          expect(data.map((contact) => contact.id)).not.toContain(selfId);
          expect(textOf(result).split('\n')[0]).toBe('Contacts 1–14 of 14.');
          expect(textOf(result)).toContain(`- Ada Lovelace <ada@example.com> — Analytical Engines (id ${owned[0]!.id})`);
          const next = await call(client, 'list_contacts', { limit: 5, offset: 5 });
          expect(textOf(next).split('\n')[0]).toBe('Contacts 6–10 of 14; the next page starts at offset 10.');
        });

        it('gives tool errors for limit and offset out of bounds, non-integers and unknown arguments', async () => {
          const cases: [Record<string, unknown>, string][] = [
            [{ limit: 0 }, '"limit" must be an integer from 1 to 100'],
            [{ limit: 101 }, '"limit" must be an integer from 1 to 100'],
            [{ limit: 2.5 }, '"limit" must be an integer from 1 to 100'],
            [{ limit: '10' }, '"limit" must be an integer from 1 to 100'],
            [{ offset: -1 }, '"offset" must be an integer from 0 to 2147483647'],
            [{ offset: 2 ** 31 }, '"offset" must be an integer from 0 to 2147483647'],
            [{ owner_id: owner.id }, 'owner_id'],
          ];
          for (const [args, message] of cases) {
            const result = await call(client, 'list_contacts', args);
            expect(result.isError, JSON.stringify(args)).toBe(true);
            expect(textOf(result), JSON.stringify(args)).toContain(message);
          }
        });
      });

      describe('get_contact', () => {
        it('returns one of the owner’s contacts as the list shows it', async () => {
          const result = await call(client, 'get_contact', { id: owned[1]!.id });
          expect(result.isError).toBeFalsy();
          expect(result.structuredContent).toEqual({
            contact: compact(owned[1]!),
            merged_from: null,
            truncated: false,
            omitted_fields: [],
          });
          expect(textOf(result)).toBe(`- Charles Babbage — Inventor (id ${owned[1]!.id})`);
          const chosen = await call(client, 'get_contact', { id: owned[0]!.id, fields: ['name', 'enrichment'] });
          expect((chosen.structuredContent as { contact: object }).contact).toEqual({
            id: owned[0]!.id,
            name: 'Ada Lovelace',
            enrichment: null,
          });
        });

        it('resolves a merged duplicate’s id to the surviving contact and says so', async () => {
          const result = await call(client, 'get_contact', { id: duplicateId });
          expect(result.structuredContent).toEqual({
            contact: compact(owned[0]!),
            merged_from: duplicateId,
            truncated: false,
            omitted_fields: [],
          });
          expect(textOf(result).split('\n')[0]).toBe(`Contact ${duplicateId} was merged into ${owned[0]!.id}; this is that contact.`);
        });

        it('gives the same "Contact not found" tool error for an unknown id, another user’s and the self row', async () => {
          for (const id of [UNKNOWN_ID, otherOwned[0]!.id, selfId]) {
            const result = await call(client, 'get_contact', { id });
            expect(result.isError, id).toBe(true);
            expect(textOf(result), id).toBe(NOT_FOUND);
            expect(result.structuredContent, id).toBeUndefined();
          }
        });

        it('gives a tool error when the id is missing, not a string or not a UUID, and for an unknown field', async () => {
          for (const args of [
            {},
            { id: 42 },
            { id: 'not-a-uuid' },
            { id: '' },
            { id: owned[0]!.id, fields: ['password'] },
            { id: owned[0]!.id, fields: [] },
          ]) {
            const result = await call(client, 'get_contact', args);
            expect(result.isError).toBe(true);
            expect(textOf(result)).toContain('Invalid arguments for tool get_contact');
          }
          expect(textOf(await call(client, 'get_contact', { id: 'not-a-uuid' }))).toContain('"id" must be a contact id (a UUID)');
        });
      });

      describe('search_contacts', () => {
        it('finds the owner’s contacts, best first, and renders them', async () => {
          const result = await call(client, 'search_contacts', { query: '  ADA ' });
          expect(result.isError).toBeFalsy();
          expect(result.structuredContent).toEqual({
            query: 'ADA',
            ambiguous: false,
            data: [{ ...compact(owned[0]!), matched: ['name', 'email'] }],
            truncated: false,
            omitted_ids: [],
          });
          expect(textOf(result)).toBe(
            `1 contact matching "ADA", best first:\n- Ada Lovelace <ada@example.com> — Analytical Engines (id ${owned[0]!.id}), matched name, email`,
          );
          const people = await call(client, 'search_contacts', { query: 'person', limit: 3 });
          expect((people.structuredContent as { data: Contact[] }).data.map((contact) => contact.name)).toEqual([
            'Person 01',
            'Person 02',
            'Person 03',
          ]);
          expect(textOf(await call(client, 'search_contacts', { query: 'nobody' }))).toBe('No contacts match "nobody".');
        });

        it('names the fields each hit matched, and says when several people match a name equally well', async () => {
          const tagged = await call(client, 'search_contacts', { query: 'math' });
          expect(tagged.structuredContent).toMatchObject({ ambiguous: false, data: [{ id: owned[0]!.id, matched: ['tags'] }] });
          const people = await call(client, 'search_contacts', { query: 'person', limit: 3 });
          const hits = (people.structuredContent as { ambiguous: boolean; data: { matched: string[] }[] }).data;
          expect((people.structuredContent as { ambiguous: boolean }).ambiguous).toBe(true);
          for (const hit of hits) expect(hit.matched).toContain('name');
          expect(textOf(people)).toContain('Several people match "person" by name equally well: ask the user which one they mean.');
          // One hit asked for: the search still looks one further, so the one returned is not taken for the only one.
          const one = await call(client, 'search_contacts', { query: 'person', limit: 1 });
          expect(one.structuredContent).toMatchObject({ ambiguous: true, data: [{ name: 'Person 01' }] });
          expect((one.structuredContent as { data: unknown[] }).data).toHaveLength(1);
        });

        it('matches tags, and treats operators as literal text', async () => {
          const tagged = await call(client, 'search_contacts', { query: 'math' });
          expect((tagged.structuredContent as { data: Contact[] }).data.map((contact) => contact.id)).toEqual([owned[0]!.id]);
          for (const query of ['"', '%', 'NEAR(', '*', 'ada AND', "'"]) {
            const result = await call(client, 'search_contacts', { query });
            expect(result.isError, query).toBeFalsy();
          }
        });

        it('gives tool errors for a blank, too long or control-character query and a limit out of bounds', async () => {
          const cases: [Record<string, unknown>, string][] = [
            [{ query: '   ' }, '"query" must not be empty'],
            [{ query: 'x'.repeat(201) }, '"query" must be at most 200 characters; got 201'],
            [{ query: 'a\u0000b' }, '"query" must not contain control characters'],
            [{ query: 'ada', limit: 0 }, '"limit" must be an integer from 1 to 50'],
            [{ query: 'ada', limit: 51 }, '"limit" must be an integer from 1 to 50'],
            [{}, 'Invalid arguments for tool search_contacts'],
          ];
          for (const [args, message] of cases) {
            const result = await call(client, 'search_contacts', args);
            expect(result.isError, JSON.stringify(args)).toBe(true);
            expect(textOf(result), JSON.stringify(args)).toContain(message);
          }
        });
      });

      it('keeps two users apart: each key sees only its owner’s contacts', async () => {
        const theirs = await call(otherClient, 'list_contacts');
        expect((theirs.structuredContent as { data: Contact[] }).data.map((contact) => contact.id)).toEqual(otherOwned.map((c) => c.id));
        const search = await call(otherClient, 'search_contacts', { query: 'ada' });
        expect((search.structuredContent as { data: Contact[] }).data.map((contact) => contact.name)).toEqual(['Ada Other']);
        expect(textOf(await call(otherClient, 'get_contact', { id: owned[0]!.id }))).toBe(NOT_FOUND);
        expect(textOf(await call(client, 'get_contact', { id: otherOwned[0]!.id }))).toBe(NOT_FOUND);
        expect(textOf(await call(otherClient, 'fetch', { id: owned[0]!.id }))).toBe(NOT_FOUND);
        expect(JSON.parse(textOf(await call(otherClient, 'search', { query: 'lovelace' })))).toEqual({ results: [] });
      });

      describe('search and fetch (ChatGPT’s shapes)', () => {
        it('search answers one text block holding {results: [{id, title, url}]}, best first', async () => {
          const result = await call(client, 'search', { query: 'ada' });
          expect(result.isError).toBeFalsy();
          expect(result.content).toHaveLength(1);
          const parsed = JSON.parse(textOf(result));
          expect(parsed).toEqual(result.structuredContent);
          expect(parsed).toEqual({
            results: [
              { id: owned[0]!.id, title: 'Ada Lovelace — Analytical Engines', url: `https://app.example.com/contacts/${owned[0]!.id}` },
            ],
          });
        });

        it('fetch answers {id, title, text, url, metadata} with every field in the text', async () => {
          const result = await call(client, 'fetch', { id: duplicateId });
          const parsed = JSON.parse(textOf(result));
          expect(parsed).toEqual(result.structuredContent);
          expect(parsed).toMatchObject({
            id: owned[0]!.id,
            title: 'Ada Lovelace — Analytical Engines',
            url: `https://app.example.com/contacts/${owned[0]!.id}`,
            metadata: { created_at: owned[0]!.created_at, updated_at: owned[0]!.updated_at, merged_from: duplicateId, source: null },
          });
          expect(parsed.text).toContain('Name: Ada Lovelace');
          expect(parsed.text).toContain('Email: ada@example.com');
          expect(parsed.text).toContain('Tags: math');
          expect(textOf(await call(client, 'fetch', { id: UNKNOWN_ID }))).toBe(NOT_FOUND);
        });
      });
    });
  }
});
