import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { once } from 'node:events';
import { readFileSync } from 'node:fs';
import { createInterface } from 'node:readline';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { ContactsClient, SyncExpiredError, type Contact } from 'contacts-read-api-client';
import { decodeSyncToken, encodeSyncToken } from '../../src/domain/changes.js';
import type { Store } from '../../src/store/store.js';
import { buildTestApp } from '../support/app.js';
import { describeEachBackend } from '../support/backends.js';
import { writeTempFile } from '../support/cli.js';
import { listenOnFreePort } from '../support/listen.js';
import { contactRecord, createKey, createUser, importNumberedContacts } from '../support/seed.js';
import { serviceKeyOf } from '../support/service-key.js';

/** Every listable contact of the owner, by id, as the listing shows them. */
async function listed(store: Store, ownerId: string): Promise<Record<string, Contact>> {
  const all: Record<string, Contact> = {};
  for (let offset = 0; ; offset += 100) {
    const page = await store.contacts.listPage(ownerId, { limit: 100, offset });
    for (const contact of page.contacts) all[contact.id] = contact;
    if (page.contacts.length < 100) return all;
  }
}

describeEachBackend('ContactsClient.mirror() and changes() against a listening server', (db) => {
  let app: FastifyInstance;
  let baseUrl: string;

  beforeAll(async () => {
    app = await buildTestApp(db().store);
    ({ origin: baseUrl } = await listenOnFreePort(app));
  });
  afterAll(async () => {
    await app?.close();
  });

  it('keeps a copy equal to the listing while writers import, edit, merge and delete during and between syncs', async () => {
    const { store } = db();
    const user = await createUser(store);
    const { key } = await createKey(store, user.id);
    await importNumberedContacts(store, user.id, 450, 'Mirror');
    const paths: string[] = [];
    const recording: typeof fetch = (input, init) => {
      paths.push(new URL(input instanceof Request ? input.url : input).pathname);
      return fetch(input, init);
    };
    const client = new ContactsClient({ baseUrl, apiKey: key, fetch: recording });
    const copy = new Map<string, Contact>();

    let round = 0;
    const write = async () => {
      round += 1;
      const ids = Object.keys(await listed(store, user.id));
      const fresh = randomUUID();
      await store.contacts.importContacts(user.id, [contactRecord({ name: `New ${round}` }, fresh)]);
      await store.contacts.importContacts(user.id, [contactRecord({ name: `Edited ${round}` }, ids[round]!)]);
      await store.contacts.merge(user.id, ids[round + 10]!, ids[round + 20]!);
      await store.contacts.delete(user.id, [ids[round + 30]!]);
    };
    // Writes land during the first sync's walk (every page request is a chance) and between syncs.
    const writing = (async () => {
      for (let i = 0; i < 5; i += 1) await write();
    })();
    let token = await client.mirror(copy);
    await writing;
    token = await client.mirror(copy, token);
    expect(Object.fromEntries(copy)).toEqual(await listed(store, user.id));
    // From nothing through the feed alone (since=0): the listing is never read.
    expect(new Set(paths)).toEqual(new Set(['/api/v1/contacts/changes']));

    await write();
    // changes() by hand, two at a time: what mirror() does inside.
    const feed = client.changes(token, { limit: 2 });
    const seen = new Set<string>();
    for await (const change of feed) {
      seen.add(change.type);
      if (change.type === 'upsert') copy.set(change.id, change.contact);
      else copy.delete(change.id);
    }
    expect([...seen].sort()).toEqual(['delete', 'merge', 'upsert']);
    expect(Object.fromEntries(copy)).toEqual(await listed(store, user.id));
    expect((await client.listChanges({ since: feed.nextSince })).data).toEqual([]);
  });

  it('starts over when the server says the token expired', async () => {
    const { store } = db();
    const user = await createUser(store);
    const { key } = await createKey(store, user.id);
    await importNumberedContacts(store, user.id, 30, 'Expired');
    const client = new ContactsClient({ baseUrl, apiKey: key, maxRetries: 0 });
    const copy = new Map<string, Contact>([['stale', {} as Contact]]);
    const serviceKey = await serviceKeyOf(store);
    const token = decodeSyncToken((await client.listChanges()).next_since, serviceKey);
    const expired = encodeSyncToken({ ...token, issuedAt: Date.now() - 400 * 86_400_000 }, serviceKey);
    await expect(client.listChanges({ since: expired })).rejects.toBeInstanceOf(SyncExpiredError);
    const next = await client.mirror(copy, expired);
    expect(copy.has('stale')).toBe(false);
    expect(Object.fromEntries(copy)).toEqual(await listed(store, user.id));
    expect((await client.listChanges({ since: next })).data).toEqual([]);
  });

  it("docs/sync.md's example, run as it is, builds a copy of the whole network", async () => {
    const { store } = db();
    const user = await createUser(store);
    const { key } = await createKey(store, user.id);
    // More than one answer of 1,000.
    await importNumberedContacts(store, user.id, 1_100, 'Example');
    const ids = Object.keys(await listed(store, user.id));
    await store.contacts.merge(user.id, ids[1]!, ids[2]!);
    await store.contacts.delete(user.id, [ids[3]!]);
    const example = /## A complete example[^]*?```js\n([^]*?)```/.exec(readFileSync('docs/sync.md', 'utf8'))![1]!;
    const child = spawn(process.execPath, [writeTempFile('sync.mjs', example)], {
      env: { ...process.env, CONTACTS_API_URL: baseUrl, CONTACTS_API_KEY: key },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    try {
      let stderr = '';
      child.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
      const exited = once(child, 'exit').then(() => Promise.reject(new Error(`the example exited: ${stderr}`)));
      const [line] = (await Promise.race([once(createInterface({ input: child.stdout! }), 'line'), exited])) as [string];
      expect(line).toBe(`${Object.keys(await listed(store, user.id)).length} contacts`);
      expect(line).toBe('1098 contacts');
    } finally {
      child.kill();
    }
  });
});
