import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { ContactsClient } from 'contacts-read-api-client';
import type { Store } from '../../src/store/store.js';
import { buildTestApp } from '../support/app.js';
import { describeEachBackend } from '../support/backends.js';
import { listenOnFreePort } from '../support/listen.js';
import { fetchContacts } from '../support/requests.js';
import { contactRecord, createKey, createUser, importNumberedContacts } from '../support/seed.js';

const CONTACTS = 400;
const PAGE_SIZE = 25;

/**
 * Changes the user's contacts around every page request, as other writers would: soft-merges a burst of
 * contacts already walked past (more than the walk's overlap, so rows slide back past its offset) and a few
 * still ahead, and inserts contacts both among the old ones (an old created_at) and at the end (now).
 */
class ConcurrentWriter {
  readonly merged = new Set<string>();
  private readonly listable: string[];
  private round = 0;
  private queue: Promise<void> = Promise.resolve();

  constructor(
    private readonly store: Store,
    private readonly ownerId: string,
    initial: readonly string[],
    /** The first contacts stay: merges go into them. */
    private readonly survivors: readonly string[],
  ) {
    this.listable = initial.filter((id) => !survivors.includes(id));
  }

  /** One round of changes, after the rounds already started; `walked` are the ids the reader has seen so far. */
  change(walked: ReadonlySet<string>): Promise<void> {
    this.queue = this.queue.then(() => this.changeNow(walked));
    return this.queue;
  }

  private async changeNow(walked: ReadonlySet<string>): Promise<void> {
    this.round += 1;
    const behind = this.listable.filter((id) => walked.has(id)).slice(-7);
    const ahead = this.listable.filter((id) => !walked.has(id)).slice(3, 5);
    for (const id of [...behind, ...ahead]) {
      await this.store.contacts.merge(this.ownerId, id, this.survivors[this.round % this.survivors.length]!);
      this.merged.add(id);
      this.listable.splice(this.listable.indexOf(id), 1);
    }
    const old = new Date(Date.parse('2024-01-01T00:00:00.000Z') + this.round * 37).toISOString();
    await this.store.contacts.importContacts(this.ownerId, [
      contactRecord({ name: `inserted among old ${this.round}`, created_at: old, updated_at: old }),
      contactRecord({ name: `inserted at the end ${this.round}` }),
    ]);
  }
}

describeEachBackend('ContactsClient.contacts() against a listening server while contacts change', (db) => {
  let app: FastifyInstance;
  let baseUrl: string;

  beforeAll(async () => {
    app = await buildTestApp(db().store);
    ({ origin: baseUrl } = await listenOnFreePort(app));
  });
  afterAll(async () => {
    await app?.close();
  });

  /** A user with CONTACTS contacts and a key, and a writer that changes them. */
  async function setUp() {
    const { store } = db();
    const user = await createUser(store);
    const { key } = await createKey(store, user.id);
    await importNumberedContacts(store, user.id, CONTACTS, 'Contact');
    const initial = (await store.contacts.listPage(user.id, { limit: 100, offset: 0 })).contacts.map((c) => c.id);
    for (let offset = 100; offset < CONTACTS; offset += 100) {
      initial.push(...(await store.contacts.listPage(user.id, { limit: 100, offset })).contacts.map((c) => c.id));
    }
    expect(initial).toHaveLength(CONTACTS);
    return { key, initial, writer: new ConcurrentWriter(store, user.id, initial, initial.slice(0, 3)) };
  }

  it('plain nextOffset paging under these changes skips contacts that existed throughout (the problem the walk solves)', async () => {
    const { key, initial, writer } = await setUp();
    const seen = new Set<string>();
    for (let offset: number | null = 0; offset !== null;) {
      if (offset > 0) await writer.change(seen);
      const response = await fetchContacts(baseUrl, key, `limit=${PAGE_SIZE}&offset=${offset}`);
      const page = (await response.json()) as { data: { id: string }[]; pagination: { nextOffset: number | null } };
      for (const contact of page.data) seen.add(contact.id);
      offset = page.pagination.nextOffset;
    }
    const lasting = initial.filter((id) => !writer.merged.has(id));
    expect(lasting.filter((id) => !seen.has(id)).length).toBeGreaterThan(0);
  });

  it('yields every contact that existed for the whole walk exactly once, and no id twice, with merges and inserts between and during requests', async () => {
    const { key, initial, writer } = await setUp();
    const yielded: string[] = [];
    const walked = new Set<string>();
    const writes: Promise<void>[] = [];
    let requests = 0;
    const client = new ContactsClient({
      baseUrl,
      apiKey: key,
      fetch: async (input, init) => {
        requests += 1;
        if (requests === 1) return fetch(input, init);
        // Odd requests: the changes land before the request. Even ones: they run while it is in flight.
        if (requests % 2 === 1) {
          await writer.change(walked);
          return fetch(input, init);
        }
        writes.push(writer.change(new Set(walked)));
        return fetch(input, init);
      },
    });
    for await (const contact of client.contacts({ pageSize: PAGE_SIZE })) {
      yielded.push(contact.id);
      walked.add(contact.id);
    }
    await Promise.all(writes);

    expect(new Set(yielded).size, 'no id yielded twice').toBe(yielded.length);
    const lasting = initial.filter((id) => !writer.merged.has(id));
    expect(writer.merged.size).toBeGreaterThan(100);
    expect(
      lasting.filter((id) => !walked.has(id)),
      'every contact that existed throughout is yielded',
    ).toEqual([]);
    expect(requests).toBeGreaterThan(CONTACTS / PAGE_SIZE);
  });
});
