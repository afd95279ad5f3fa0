import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { Contact } from '../../src/domain/contact.js';
import { describeEachBackend } from '../support/backends.js';
import { contactRecord, createKey, createUser, importNumberedContacts } from '../support/seed.js';
import { startServerProcess, type ServerProcess } from '../support/server-process.js';

interface Feed {
  data: { type: string; id: string; contact?: Contact }[];
  next_since: string;
  has_more: boolean;
}

/**
 * Real processes: two workers, and a restart, all reading the one service key from the database. A token one worker
 * signed is followed on the other and after the restart; a forged one is refused by all.
 */
describeEachBackend('sync tokens and entity tags across workers and a restart (real processes)', (db) => {
  let server: ServerProcess;

  const start = async () => {
    server = await startServerProcess({ DATABASE_URL: db().databaseUrl, WORKERS: '2', RATE_LIMIT_PER_MINUTE: '0', LOG_LEVEL: 'info' });
    while ((server.output().match(/listening on/g) ?? []).length < 2) await new Promise((resolve) => setTimeout(resolve, 50));
  };
  // A new connection per request, so the primary spreads them over both workers.
  const get = (path: string, key: string, headers: Record<string, string> = {}) =>
    fetch(`${server.url}${path}`, { headers: { authorization: `Bearer ${key}`, connection: 'close', ...headers } });
  const feed = async (since: string, key: string) => {
    const response = await get(`/api/v1/contacts/changes?since=${since}&limit=4`, key);
    return { status: response.status, body: (await response.json()) as Feed & { error?: string } };
  };
  const listed = async (ownerId: string) => {
    const page = await db().store.contacts.listPage(ownerId, { limit: 100, offset: 0 });
    return Object.fromEntries(page.contacts.map((contact) => [contact.id, contact]));
  };

  beforeAll(start);
  afterAll(async () => {
    await server?.kill();
  });

  it('a walk from since=0 goes on across both workers and a restart, and ends equal to the listing', async () => {
    const { store } = db();
    const user = await createUser(store);
    const { key } = await createKey(store, user.id);
    await importNumberedContacts(store, user.id, 20, 'Workers');
    const copy = new Map<string, Contact>();
    let token = '0';
    for (let page = 0; ; page += 1) {
      if (page === 3) {
        await server.kill();
        await start();
      }
      const { status, body } = await feed(token, key);
      expect(status, JSON.stringify(body)).toBe(200);
      for (const change of body.data) {
        if (change.type === 'upsert') copy.set(change.id, change.contact!);
        else copy.delete(change.id);
      }
      token = body.next_since;
      if (!body.has_more) break;
      // Between pages: a delete of a contact not reached yet, one already sent, and an insert.
      const ids = Object.keys(await listed(user.id));
      await store.contacts.delete(user.id, [ids.at(-1)!, ids[0]!]);
      await store.contacts.importContacts(user.id, [contactRecord({ name: `Inserted ${page}` }, randomUUID())]);
    }
    expect(Object.fromEntries(copy)).toEqual(await listed(user.id));
    const pids = new Set(
      server
        .logLines()
        .filter((line) => line.msg === 'request completed')
        .map((line) => line.pid),
    );
    expect(pids.size, 'both workers answered after the restart').toBe(2);
  });

  it('every worker refuses an edited token with 400, and never answers 304 to another owner’s tag', async () => {
    const { store } = db();
    const [first, second] = [await createUser(store), await createUser(store)];
    for (const user of [first, second]) await importNumberedContacts(store, user.id, 3, 'Twin');
    const [firstKey, secondKey] = [(await createKey(store, first.id)).key, (await createKey(store, second.id)).key];
    const position = (await feed('0', firstKey)).body.next_since;
    const [keyId, payload, signature] = position.split('.');
    const fields = JSON.parse(Buffer.from(payload!, 'base64url').toString()) as unknown[];
    const later = Buffer.from(JSON.stringify(fields.with(3, Date.now() + 365 * 86_400_000))).toString('base64url');
    for (let request = 0; request < 4; request += 1) {
      expect((await feed(position, firstKey)).status).toBe(200);
      expect((await feed(`${keyId}.${later}.${signature}`, firstKey)).status).toBe(400);
      const tag = (await get('/api/v1/contacts', firstKey)).headers.get('etag')!;
      expect((await get('/api/v1/contacts', secondKey, { 'if-none-match': tag })).status).toBe(200);
      expect((await get('/api/v1/contacts', firstKey, { 'if-none-match': tag })).status).toBe(304);
    }
  });
});
