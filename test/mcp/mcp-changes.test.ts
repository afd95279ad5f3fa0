import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { createMcpHandler, McpServer, type CallToolResult } from '@modelcontextprotocol/server';
import { afterAll, beforeAll, expect, it } from 'vitest';
import type * as z from 'zod';
import { CHANGES_LIMIT_MAX } from '../../src/domain/changes.js';
import type { ListChangesOutput } from '../../src/mcp/change-schemas.js';
import { registerChangeTool } from '../../src/mcp/change-tool.js';
import { NAMING_TEXT_MAX, RESULT_BUDGET_BYTES } from '../../src/mcp/result-budget.js';
import { toolRunner } from '../../src/mcp/tool-results.js';
import type { Store, User } from '../../src/store/store.js';
import { serviceKeyFrom } from '../../src/web/service-key.js';
import { describeEachBackend } from '../support/backends.js';
import { openOtherConnection, type OtherConnection } from '../support/other-connection.js';
import { contactRecord, createUser } from '../support/seed.js';

const RETENTION_DAYS = 30;
const RETENTION_MS = RETENTION_DAYS * 86_400_000;
const START_AGAIN = /further back than the change log reaches \(it keeps 30 days of changes\).*Start again with since="0"/s;

/** What list_changes answers, as its output schema says. */
type Answer = z.infer<typeof ListChangesOutput>;

const textOf = (result: CallToolResult): string => (result.content[0] as { text: string }).text;

describeEachBackend('MCP list_changes (2026-07-28 client)', (db) => {
  let store: Store;
  let owner: User;
  let stranger: User;
  let other: OtherConnection;
  const clients: Client[] = [];

  /** A client pinned to 2026-07-28, served in-process by a server with list_changes for `user`'s key. */
  async function connect(user: User): Promise<Client> {
    const serviceKey = serviceKeyFrom(store.oauth);
    const handler = createMcpHandler(
      () => {
        const server = new McpServer({ name: 'contacts-api-test', version: '1.0.0' });
        const run = toolRunner({ owner: async () => user.id, onError: (error) => expect.fail(String(error)) });
        registerChangeTool(server, { contacts: store.contacts, retentionMs: RETENTION_MS, serviceKey }, run);
        return server;
      },
      { responseMode: 'json' },
    );
    const client = new Client({ name: 'contacts-api-test', version: '1.0.0' }, { versionNegotiation: { mode: { pin: '2026-07-28' } } });
    await client.connect(
      new StreamableHTTPClientTransport(new URL('http://mcp.test/mcp'), { fetch: (url, init) => handler.fetch(new Request(url, init)) }),
    );
    clients.push(client);
    return client;
  }

  const call = (client: Client, args: Record<string, unknown>) =>
    client.callTool({ name: 'list_changes', arguments: args }) as Promise<CallToolResult>;
  async function changes(client: Client, args: Record<string, unknown>): Promise<Answer> {
    const result = await call(client, args);
    expect(result.isError, textOf(result)).toBeFalsy();
    return result.structuredContent as unknown as Answer;
  }
  /** Every answer from `since` while has_more, and the last next_since. */
  async function follow(client: Client, since: string, limit: number, args: Record<string, unknown> = {}) {
    const answers: Answer[] = [];
    for (let next = since; ;) {
      const answer = await changes(client, { ...args, since: next, limit });
      answers.push(answer);
      next = answer.next_since;
      if (!answer.has_more) return { answers, next };
    }
  }
  const importNamed = async (user: User, name: string, id = randomUUID(), createdAt?: string) => {
    const values = { name, email: `${id.slice(0, 8)}@example.com`, ...(createdAt === undefined ? {} : { created_at: createdAt }) };
    await store.contacts.importContacts(user.id, [contactRecord(values, id)]);
    return id;
  };

  let client: Client;
  let strangerClient: Client;
  const initial: string[] = [];

  beforeAll(async () => {
    store = db().store;
    owner = await createUser(store, 'pro', 'Owner Self');
    stranger = await createUser(store);
    other = await openOtherConnection(db());
    // Created a minute apart, so the list order is theirs.
    const base = Date.parse('2024-06-01T00:00:00.000Z');
    for (let i = 1; i <= 7; i++)
      initial.push(await importNamed(owner, `Person ${i}`, randomUUID(), new Date(base + i * 60_000).toISOString()));
    await importNamed(stranger, 'Stranger One');
    client = await connect(owner);
    strangerClient = await connect(stranger);
  });

  afterAll(async () => {
    await Promise.all(clients.map((each) => each.close()));
    await other.close();
  });

  it('is listed read-only, with its input bounded and its output described', async () => {
    const { tools } = await client.listTools();
    const tool = tools.find((each) => each.name === 'list_changes')!;
    expect(tool.annotations).toMatchObject({ readOnlyHint: true, idempotentHint: true, openWorldHint: false });
    expect(tool.inputSchema.required).toEqual(['since']);
    expect(tool.inputSchema.properties!.limit).toMatchObject({ minimum: 1, maximum: CHANGES_LIMIT_MAX });
    expect(Object.keys(tool.outputSchema!.properties!)).toEqual(['since', 'data', 'next_since', 'has_more', 'truncated']);
    expect(tool.inputSchema.additionalProperties, 'unknown arguments are refused').toBe(false);
    // Portable, as the other tools' (the Inspector's --strict): no `type` array, no schema without a keyword.
    expect(JSON.stringify(tool.outputSchema)).not.toMatch(/"type":\[/);
    expect(JSON.stringify(tool.outputSchema)).not.toMatch(/"(additionalProperties|items)":\{\}/);
  });

  it('since=0 walks every contact, then follows the changes made meanwhile, nothing lost or repeated over pages', async () => {
    const first = await changes(client, { since: '0', limit: 3 });
    expect(first.data.map((change) => change.name)).toEqual(['Person 1', 'Person 2', 'Person 3']);
    expect(first.has_more).toBe(true);
    expect(first.data[0]!.contact).toMatchObject({ id: initial[0], name: 'Person 1' });
    expect(first.data[0]!.contact).not.toHaveProperty('enrichment');

    // Written during the walk: a new contact, an edit to one already sent, a deletion of one not yet sent.
    const added = await importNamed(owner, 'Joined Meanwhile');
    await store.contacts.importContacts(owner.id, [contactRecord({ name: 'Person 1 Renamed' }, initial[0])]);
    await store.contacts.delete(owner.id, [initial[5]!]);

    const rest = await follow(client, first.next_since, 3);
    const all = [first, ...rest.answers].flatMap((answer) => answer.data);
    for (const answer of rest.answers) expect(answer.data.length).toBeLessThanOrEqual(3);
    // A copy built by applying them in order is exactly the listing now.
    const copy = new Map<string, string | null>();
    for (const change of all) {
      if (change.type === 'upsert') copy.set(change.id, change.name);
      else copy.delete(change.id);
    }
    const listed = (await store.contacts.listPage(owner.id, { limit: 100, offset: 0 })).contacts;
    expect(new Map(listed.map((contact) => [contact.id, contact.name]))).toEqual(copy);
    expect(copy.get(added)).toBe('Joined Meanwhile');
    expect(copy.get(initial[0]!)).toBe('Person 1 Renamed');
    // The deletion comes with the name the contact had.
    expect(all).toContainEqual(expect.objectContaining({ type: 'delete', id: initial[5], name: 'Person 6' }));

    // Caught up: nothing waits, and the token is where later changes start.
    const caughtUp = await changes(client, { since: rest.next });
    expect(caughtUp).toMatchObject({ data: [], has_more: false });
    const later = await importNamed(owner, 'Joined Later');
    expect((await changes(client, { since: caughtUp.next_since })).data.map((change) => change.id)).toEqual([later]);
  });

  it('a token continues exactly where the last answer ended: every change once, in order, over pages of one', async () => {
    const start = (await follow(client, '0', CHANGES_LIMIT_MAX)).next;
    const made: string[] = [];
    for (let i = 0; i < 5; i++) made.push(await importNamed(owner, `Paged ${i}`));
    const { answers } = await follow(client, start, 1);
    expect(answers.flatMap((answer) => answer.data.map((change) => change.id))).toEqual(made);
    expect(answers.every((answer) => answer.data.length <= 1)).toBe(true);
  });

  it('a time gives the changes at or after it, with names: merges with their survivor, deletions as they were', async () => {
    const survivor = await importNamed(owner, 'Ada Lovelace');
    const duplicate = await importNamed(owner, 'Ada L.');
    const gone = await importNamed(owner, 'Charles Babbage');
    await sleep(20);
    const time = new Date().toISOString();
    await sleep(20);
    const joined = await importNamed(owner, 'Grace Hopper');
    await store.contacts.merge(owner.id, duplicate, survivor);
    await store.contacts.delete(owner.id, [gone]);

    const result = await call(client, { since: time });
    const answer = result.structuredContent as unknown as Answer;
    expect(answer.since).toBe(time);
    expect(
      answer.data.map(({ type, id, name, merged_into, merged_into_name }) => ({ type, id, name, merged_into, merged_into_name })),
    ).toEqual([
      { type: 'upsert', id: joined, name: 'Grace Hopper', merged_into: undefined, merged_into_name: undefined },
      { type: 'merge', id: duplicate, name: 'Ada L.', merged_into: survivor, merged_into_name: 'Ada Lovelace' },
      { type: 'delete', id: gone, name: 'Charles Babbage', merged_into: undefined, merged_into_name: undefined },
    ]);
    expect(answer.has_more).toBe(false);
    const text = textOf(result);
    expect(text).toContain(`3 changes since ${time}: 1 new or updated, 1 merged, 1 deleted.`);
    expect(text).toContain(`merged: Ada L. (id ${duplicate}) into Ada Lovelace (id ${survivor})`);
    expect(text).toContain(`deleted: Charles Babbage (id ${gone})`);
    expect(text).toContain(`call list_changes later with since="${answer.next_since}"`);
    expect(JSON.parse((result.content[1] as { text: string }).text)).toEqual(result.structuredContent);
    // A time with an offset names the same instant.
    const offset = new Date(Date.parse(time) + 2 * 3_600_000).toISOString().replace('Z', '+02:00');
    expect((await changes(client, { since: offset })).data.map((change) => change.id)).toEqual([joined, duplicate, gone]);
  });

  it('never shows another owner’s changes, and refuses another owner’s token', async () => {
    const before = new Date().toISOString();
    await sleep(5);
    const theirs = await importNamed(stranger, 'Stranger Two');
    await store.contacts.delete(stranger.id, [theirs]);
    const mine = await follow(client, '0', CHANGES_LIMIT_MAX);
    const ids = mine.answers.flatMap((answer) => answer.data.map((change) => change.id));
    expect(ids).not.toContain(theirs);
    expect(mine.answers.flatMap((answer) => answer.data.map((change) => change.name))).not.toContain('Stranger One');
    // Theirs, as they see it: the contact they added and deleted since, as one change, its latest.
    const theirAnswer = await changes(strangerClient, { since: before });
    expect(theirAnswer.data.map((change) => [change.type, change.id, change.name])).toEqual([['delete', theirs, 'Stranger Two']]);
    const refused = await call(strangerClient, { since: mine.next });
    expect(refused.isError).toBe(true);
    expect(textOf(refused)).toBe('"since" is a token of another API key\'s network');
  });

  it('refuses a bad since with a specific error, and a time before the retention with the start-again error', async () => {
    const { next } = await follow(client, '0', CHANGES_LIMIT_MAX);
    const [keyId, payload, signature] = next.split('.');
    const altered = `${keyId}.${payload}.${signature!.startsWith('A') ? 'B' : 'A'}${signature!.slice(1)}`;
    const cases: [string, RegExp][] = [
      ['not-a-token', /^"since" must be "0", a next_since token that list_changes .* or an ISO 8601 time such as 2026-11-21T00:00:00Z$/],
      [altered, /^"since" was altered \(its signature does not match\)/],
      [`${keyId}.${payload}`, /^"since" carries no signature/],
      ['2026-11-21', /^"since" must be an ISO 8601 date-time with a time zone, such as 2026-01-31T09:00:00Z; got "2026-11-21"$/],
      ['2026-11-21T00:00:00', /^"since" must be an ISO 8601 date-time with a time zone/],
      [new Date(Date.now() + 3_600_000).toISOString(), /^"since" must not be in the future/],
      [new Date(Date.now() - RETENTION_MS - 60_000).toISOString(), START_AGAIN],
    ];
    for (const [since, message] of cases) {
      const result = await call(client, { since });
      expect(result.isError, since).toBe(true);
      expect(textOf(result), since).toMatch(message);
    }
    const outOfBounds = await call(client, { since: '0', limit: CHANGES_LIMIT_MAX + 1 });
    expect(outOfBounds.isError).toBe(true);
    expect(textOf(outOfBounds)).toContain(`"limit" must be an integer from 1 to ${CHANGES_LIMIT_MAX}`);
  });

  it('answers a token the log can no longer follow with the start-again error', async () => {
    const token = (await changes(client, { since: new Date(Date.now() - 1000).toISOString() })).next_since;
    // The log moved past every token, as a TRUNCATE does; the walk from since=0 then recovers.
    await other.run('UPDATE owner_listing SET changes_from = change_seq + 1, change_seq = change_seq + 1 WHERE owner_id = ?', owner.id);
    const expired = await call(client, { since: token });
    expect(expired.isError).toBe(true);
    expect(textOf(expired)).toMatch(START_AGAIN);
    expect((await follow(client, '0', CHANGES_LIMIT_MAX)).answers.at(-1)!.has_more).toBe(false);
  });

  it('stays within the result budget, each next_since continuing right after the last change given', async () => {
    const start = (await follow(client, '0', CHANGES_LIMIT_MAX)).next;
    const large = { summary: 'x'.repeat(8_000) };
    const ids = Array.from({ length: 10 }, () => randomUUID());
    await store.contacts.importContacts(
      owner.id,
      ids.map((id, i) => contactRecord({ name: `Large ${i}`, enrichment: large }, id)),
    );
    const first = await call(client, { since: start, fields: ['name', 'enrichment'] });
    const answer = first.structuredContent as unknown as Answer;
    expect(answer.truncated).toBe(true);
    expect(answer.has_more).toBe(true);
    expect(answer.data.length).toBeLessThan(ids.length);
    expect(Buffer.byteLength(JSON.stringify(answer))).toBeLessThan(RESULT_BUDGET_BYTES + 1_000);
    expect(textOf(first)).toContain(`Cut from ${ids.length} changes to fit the size budget.`);
    const rest = await follow(client, answer.next_since, CHANGES_LIMIT_MAX);
    // One import is one change of each contact, in the log's order: each comes once.
    const seen = [answer, ...rest.answers].flatMap((each) => each.data.map((change) => change.id));
    expect(seen.sort()).toEqual([...ids].sort());
  });

  it('cuts a walk from since=0 to the budget too, and a contact past it alone loses its largest fields', async () => {
    const walker = await createUser(store);
    const base = Date.parse('2024-06-01T00:00:00.000Z');
    const ids = Array.from({ length: 10 }, () => randomUUID());
    await store.contacts.importContacts(
      walker.id,
      ids.map((id, i) =>
        contactRecord(
          {
            name: `Large ${i}`,
            enrichment: { summary: 'x'.repeat(i === 0 ? 40_000 : 8_000) },
            created_at: new Date(base + i * 60_000).toISOString(),
          },
          id,
        ),
      ),
    );
    const walkerClient = await connect(walker);
    const { answers } = await follow(walkerClient, '0', CHANGES_LIMIT_MAX, { fields: ['name', 'enrichment'] });
    // The first contact alone is past the budget: it comes alone, without its enrichment.
    expect(answers[0]!.data).toEqual([expect.objectContaining({ id: ids[0], contact: { id: ids[0], name: 'Large 0' } })]);
    expect(answers[0]!.truncated).toBe(true);
    const alone = await call(walkerClient, { since: '0', limit: 1, fields: ['name', 'enrichment'] });
    expect((alone.structuredContent as unknown as Answer).truncated).toBe(true);
    expect(textOf(alone)).toContain(
      `Left out of ${ids[0]} to fit the size budget: enrichment; ask get_contact for each alone with fields.`,
    );
    expect(answers.length).toBeGreaterThan(2);
    for (const answer of answers) expect(Buffer.byteLength(JSON.stringify(answer))).toBeLessThan(RESULT_BUDGET_BYTES + 1_000);
    // In list order, each once, the others whole.
    expect(answers.flatMap((answer) => answer.data.map((change) => change.id))).toEqual(ids);
    expect(answers.slice(1).flatMap((answer) => answer.data.map((change) => change.contact!.enrichment))).toEqual(
      Array.from({ length: 9 }, () => ({ summary: 'x'.repeat(8_000) })),
    );
  });

  it('a deleted or merged contact with a name past the budget still comes, its name cut, and the walk moves on', async () => {
    const hoarder = await createUser(store);
    const hoarderClient = await connect(hoarder);
    const start = (await changes(hoarderClient, { since: '0' })).next_since;
    const longName = 'N'.repeat(40_000);
    const gone = await importNamed(hoarder, longName);
    const duplicate = await importNamed(hoarder, `${longName} again`);
    const survivor = await importNamed(hoarder, longName);
    await store.contacts.delete(hoarder.id, [gone]);
    await store.contacts.merge(hoarder.id, duplicate, survivor);
    const { answers } = await follow(hoarderClient, start, 1);
    const seen = new Map(answers.flatMap((answer) => answer.data).map((entry) => [entry.id, entry]));
    expect(Object.fromEntries([...seen].map(([id, { type }]) => [id, type]))).toEqual({
      [gone]: 'delete',
      [duplicate]: 'merge',
      [survivor]: 'upsert',
    });
    for (const { name } of seen.values()) {
      expect([...name!]).toHaveLength(NAMING_TEXT_MAX);
      expect(name!.endsWith('…')).toBe(true);
    }
    expect([...seen.get(duplicate)!.merged_into_name!]).toHaveLength(NAMING_TEXT_MAX);
  });
});
