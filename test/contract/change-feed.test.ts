import { execFile } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { promisify } from 'node:util';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { decodeSyncToken, encodeSyncToken } from '../../src/domain/changes.js';
import type { Contact } from '../../src/domain/contact.js';
import { openStore } from '../../src/store/open-store.js';
import { parseDatabaseUrl } from '../../src/domain/database-url.js';
import type { Store, User } from '../../src/store/store.js';
import { buildTestApp } from '../support/app.js';
import { describeEachBackend } from '../support/backends.js';
import { openOtherConnection, type OtherConnection } from '../support/other-connection.js';
import { prng } from '../support/prng.js';
import { listContactChanges } from '../support/requests.js';
import { contactRecord, createKey, createUser, importNumberedContacts } from '../support/seed.js';
import { serviceKeyOf } from '../support/service-key.js';

interface Change {
  type: 'upsert' | 'merge' | 'delete';
  id: string;
  changed_at: string;
  contact?: Contact;
  merged_into?: string;
}
interface Feed {
  data: Change[];
  next_since: string;
  has_more: boolean;
}

const run = promisify(execFile);
const ISO_MILLIS = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

describeEachBackend('the change feed: GET /api/v1/contacts/changes', (db) => {
  let app: FastifyInstance;
  let store: Store;
  let owner: User;
  let key: string;
  let other: OtherConnection;

  const feed = async (query: string, apiKey = key) => {
    const response = await listContactChanges(app, apiKey, query);
    return { status: response.statusCode, body: response.json() as Feed & { error?: string } };
  };
  const position = async () => (await feed('')).body.next_since;
  /** Every change after `since`, following next_since through has_more. */
  const follow = async (since: string, limit = 100): Promise<{ changes: Change[]; next: string }> => {
    const changes: Change[] = [];
    let token = since;
    for (;;) {
      const { status, body } = await feed(`since=${token}&limit=${limit}`);
      expect(status, JSON.stringify(body)).toBe(200);
      changes.push(...body.data);
      token = body.next_since;
      if (!body.has_more) return { changes, next: token };
    }
  };

  /** Another store on the same database: its own pool (PostgreSQL) or connection (SQLite). */
  const secondStore = async () => {
    // SQLite has one writer at a time, and better-sqlite3 waits for a lock synchronously: a second connection in this
    // process would stall the first. Another process writes through the sqlite3 shell instead (sqlFromAnotherProcess).
    if (db().backend === 'sqlite') return { store, dispose: async () => undefined };
    const second = await openStore(parseDatabaseUrl(db().databaseUrl));
    return { store: second, dispose: () => second.close() };
  };
  /** SQL run by another process (SQLite) or connection (PostgreSQL), with its values inlined. */
  const sqlFromElsewhere = async (sql: string) => {
    const target = parseDatabaseUrl(db().databaseUrl);
    if (target.kind === 'postgres') return other.run(sql);
    await run('sqlite3', ['-cmd', '.timeout 10000', target.path, sql]);
  };

  beforeAll(async () => {
    store = db().store;
    app = await buildTestApp(store);
    owner = await createUser(store);
    key = (await createKey(store, owner.id)).key;
    other = await openOtherConnection(db());
  });
  afterAll(async () => {
    await other.close();
    await app.close();
  });

  it('without since answers the current position and no changes; the self row never appears', async () => {
    const { status, body } = await feed('');
    expect(status).toBe(200);
    expect(body).toEqual({ data: [], next_since: expect.any(String), has_more: false });
    expect((await follow(body.next_since)).changes).toEqual([]);
  });

  it('reports imports as upserts in change order, with the contact as the listing shows it', async () => {
    const since = await position();
    const ids = [randomUUID(), randomUUID(), randomUUID()];
    await store.contacts.importContacts(
      owner.id,
      ids.map((id, index) => contactRecord({ name: `Sync ${index}` }, id)),
    );
    const { changes, next } = await follow(since);
    expect(changes.map((change) => [change.type, change.id])).toEqual(expect.arrayContaining(ids.map((id) => ['upsert', id])));
    expect(changes).toHaveLength(3);
    for (const change of changes) {
      expect(change.changed_at).toMatch(ISO_MILLIS);
      expect(change.contact).toEqual((await store.contacts.get(owner.id, change.id))!.contact);
    }
    expect((await follow(next)).changes).toEqual([]);
  });

  it('collapses several changes to one contact into its latest state, and reports merges with the survivor', async () => {
    const [a, b] = [randomUUID(), randomUUID()];
    await store.contacts.importContacts(owner.id, [contactRecord({ name: 'A' }, a), contactRecord({ name: 'B' }, b)]);
    const since = await position();
    await store.contacts.importContacts(owner.id, [contactRecord({ name: 'A renamed' }, a)]);
    await store.contacts.importContacts(owner.id, [contactRecord({ name: 'A renamed twice' }, a)]);
    await store.contacts.merge(owner.id, b, a);
    const { changes } = await follow(since);
    expect(changes.map((change) => [change.type, change.id])).toEqual([
      ['upsert', a],
      ['merge', b],
    ]);
    expect(changes[0]!.contact!.name).toBe('A renamed twice');
    expect(changes[1]).toMatchObject({ merged_into: a });
  });

  it('records direct SQL from another connection: INSERT, UPDATE and DELETE', async () => {
    const since = await position();
    const id = randomUUID();
    const now = new Date().toISOString();
    await other.run(
      'INSERT INTO contacts (id, owner_id, is_self, name, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?)',
      id,
      owner.id,
      db().backend === 'sqlite' ? 0 : false,
      'Direct',
      now,
      now,
    );
    let { changes, next } = await follow(since);
    expect(changes.map((change) => [change.type, change.id, change.contact?.name])).toEqual([['upsert', id, 'Direct']]);
    await other.run('UPDATE contacts SET name = ? WHERE id = ?', 'Direct, renamed', id);
    ({ changes, next } = await follow(next));
    expect(changes.map((change) => [change.type, change.contact?.name])).toEqual([['upsert', 'Direct, renamed']]);
    await other.run('DELETE FROM contacts WHERE id = ?', id);
    ({ changes } = await follow(next));
    expect(changes.map((change) => [change.type, change.id])).toEqual([['delete', id]]);
  });

  it('reports contacts deleted by the store, with the duplicates merged into them', async () => {
    const [survivor, duplicate] = [randomUUID(), randomUUID()];
    await store.contacts.importContacts(owner.id, [contactRecord({ name: 'S' }, survivor), contactRecord({ name: 'D' }, duplicate)]);
    await store.contacts.merge(owner.id, duplicate, survivor);
    const since = await position();
    expect(await store.contacts.delete(owner.id, [survivor.toUpperCase()])).toBe(1);
    const { changes } = await follow(since);
    expect(changes.map((change) => [change.type, change.id]).sort()).toEqual(
      [
        ['delete', survivor],
        ['delete', duplicate],
      ].sort(),
    );
    expect(await store.contacts.get(owner.id, duplicate)).toBeNull();
    await expect(store.contacts.delete(owner.id, [randomUUID()])).rejects.toThrow(/is not one of this user's contacts/);
  });

  it('pages with limit and has_more, each change exactly once', async () => {
    const since = await position();
    const ids = Array.from({ length: 7 }, () => randomUUID());
    for (const id of ids) await store.contacts.importContacts(owner.id, [contactRecord({ name: id }, id)]);
    const { status, body } = await feed(`since=${since}&limit=3`);
    expect(status).toBe(200);
    expect(body.data).toHaveLength(3);
    expect(body.has_more).toBe(true);
    const { changes } = await follow(since, 2);
    expect(changes.map((change) => change.id)).toEqual(ids);
  });

  describe('tokens', () => {
    it("refuses another owner's token with 400, never data", async () => {
      const stranger = await createUser(store);
      const strangerKey = (await createKey(store, stranger.id)).key;
      const theirs = (await feed('', strangerKey)).body.next_since;
      const { status, body } = await feed(`since=${theirs}`);
      expect({ status, body }).toEqual({
        status: 400,
        body: { error: 'Query parameter "since" is a token of another API key\'s network' },
      });
    });

    it('refuses a malformed token and unknown parameters with 400 naming them', async () => {
      for (const since of ['nope', 'Zm9v', '!!!', '']) {
        const { status, body } = await feed(`since=${encodeURIComponent(since)}`);
        expect({ since, status }).toEqual({ since, status: 400 });
        expect(body.error).toContain('"since"');
      }
      expect((await feed('limit=0')).body.error).toContain('"limit"');
      expect((await feed('limit=1001')).status).toBe(400);
      expect((await feed('owner_id=x')).body.error).toContain('"owner_id"');
    });

    it('never follows a forged token: an edited one is 400, an unsigned one of the old format 410', async () => {
      const issued = await position();
      const later = Date.now() + 365 * 86_400_000;
      // The pre-signing format (base64url of owner.seq.after.issuedAt) with an issue time a year ahead: 200 before signing.
      const unsigned = Buffer.from(`${owner.id.replaceAll('-', '')}.0..${later}`).toString('base64url');
      expect(await feed(`since=${unsigned}`)).toEqual({ status: 410, body: { error: 'Sync token expired; list the contacts again' } });
      const [keyId, payload] = issued.split('.');
      const fields = JSON.parse(Buffer.from(payload!, 'base64url').toString()) as unknown[];
      const editedPayload = Buffer.from(JSON.stringify(fields.with(3, later))).toString('base64url');
      const edited = `${keyId}.${editedPayload}.${issued.split('.')[2]}`;
      expect(await feed(`since=${edited}`)).toEqual({
        status: 400,
        body: {
          error: 'Query parameter "since" was altered (its signature does not match): pass next_since exactly as this API returned it',
        },
      });
      expect((await feed(`since=${keyId}.${editedPayload}`)).body.error).toMatch(/"since" carries no signature/);
      expect((await feed(`since=${issued}`)).status).toBe(200);
    });

    it('answers 410 for a token past the retention or unknown to this database', async () => {
      const serviceKey = await serviceKeyOf(store);
      const current = decodeSyncToken(await position(), serviceKey);
      const old = encodeSyncToken({ ...current, issuedAt: Date.now() - 31 * 86_400_000 }, serviceKey);
      expect(await feed(`since=${old}`)).toEqual({ status: 410, body: { error: 'Sync token expired; list the contacts again' } });
      const ahead = encodeSyncToken({ ...current, seq: current.seq + 1000 }, serviceKey);
      expect((await feed(`since=${ahead}`)).status).toBe(410);
    });
  });

  it('under concurrent writers, a reader following tokens ends with a copy equal to the listing', async () => {
    const { store: writerStore, dispose } = await secondStore();
    const copy = new Map<string, Contact>();
    const apply = (changes: Change[]) => {
      const ids = changes.map((change) => change.id);
      expect(new Set(ids).size, 'a change appears once per call').toBe(ids.length);
      for (const change of changes) {
        if (change.type === 'upsert') copy.set(change.id, change.contact!);
        else copy.delete(change.id);
      }
    };
    // Start from nothing, as a client does: the position first, then the walk, then the changes since.
    let token = await position();
    for (let offset = 0; ; offset += 100) {
      const page = await store.contacts.listPage(owner.id, { limit: 100, offset });
      for (const contact of page.contacts) copy.set(contact.id, contact);
      if (page.contacts.length < 100) break;
    }
    let writing = true;
    const writer = async (write: (round: number) => Promise<void>) => {
      for (let round = 0; round < 25; round += 1) await write(round);
    };
    const ids: string[] = [];
    const writers = Promise.all([
      writer(async (round) => {
        const batch = [randomUUID(), randomUUID()];
        ids.push(...batch);
        await store.contacts.importContacts(
          owner.id,
          batch.map((id) => contactRecord({ name: `W1 ${round}` }, id)),
        );
      }),
      writer(async (round) => {
        const id = randomUUID();
        ids.push(id);
        await writerStore.contacts.importContacts(owner.id, [contactRecord({ name: `W2 ${round}` }, id)]);
        const target = ids[Math.floor(ids.length / 2)];
        if (target && target !== id)
          await writerStore.contacts.importContacts(owner.id, [contactRecord({ name: `W2 edit ${round}` }, target)]);
      }),
      writer(async (round) => {
        const now = new Date().toISOString();
        const id = randomUUID();
        const notSelf = db().backend === 'sqlite' ? '0' : 'false';
        await sqlFromElsewhere(
          `INSERT INTO contacts (id, owner_id, is_self, name, created_at, updated_at) VALUES ('${id}', '${owner.id}', ${notSelf}, 'SQL ${round}', '${now}', '${now}')`,
        );
        if (round % 3 === 0) await sqlFromElsewhere(`DELETE FROM contacts WHERE id = '${id}'`);
        const [duplicate, survivor] = [ids[round], ids[round + 1]];
        if (round % 4 === 1 && duplicate && survivor)
          await writerStore.contacts.merge(owner.id, duplicate, survivor).catch(() => undefined);
      }),
    ]).finally(() => {
      writing = false;
    });
    const step = async () => {
      const { status, body } = await feed(`since=${token}&limit=7`);
      expect(status, JSON.stringify(body)).toBe(200);
      apply(body.data);
      token = body.next_since;
      return body.has_more;
    };
    while (writing) {
      await step();
      await new Promise((resolve) => setTimeout(resolve, 1));
    }
    await writers;
    while (await step());
    await dispose();

    const listed = new Map<string, Contact>();
    for (let offset = 0; ; offset += 100) {
      const page = await store.contacts.listPage(owner.id, { limit: 100, offset });
      for (const contact of page.contacts) listed.set(contact.id, contact);
      if (page.contacts.length < 100) break;
    }
    expect(copy.size).toBe(listed.size);
    expect(Object.fromEntries(copy)).toEqual(Object.fromEntries(listed));
  });

  describe('a walk from since=0: every contact, then the changes made meanwhile', () => {
    /** Every listable contact of `userId`, by id, as the listing shows them. */
    const listed = async (userId: string) => {
      const all = new Map<string, Contact>();
      for (let offset = 0; ; offset += 100) {
        const page = await store.contacts.listPage(userId, { limit: 100, offset });
        for (const contact of page.contacts) all.set(contact.id, contact);
        if (page.contacts.length < 100) return all;
      }
    };

    it('sends an empty network as one empty answer, and then follows on from it', async () => {
      const user = await createUser(store);
      const userKey = (await createKey(store, user.id)).key;
      const { status, body } = await feed('since=0', userKey);
      expect({ status, body }).toEqual({ status: 200, body: { data: [], next_since: expect.any(String), has_more: false } });
      const id = randomUUID();
      await store.contacts.importContacts(user.id, [contactRecord({ name: 'After' }, id)]);
      expect((await feed(`since=${body.next_since}`, userKey)).body.data.map((change) => [change.type, change.id])).toEqual([
        ['upsert', id],
      ]);
    });

    it('keeps the time of its first page in every token, so a walk longer than the retention gets 410', async () => {
      const user = await createUser(store);
      const userKey = (await createKey(store, user.id)).key;
      await importNumberedContacts(store, user.id, 5, 'Slow walk');
      const serviceKey = await serviceKeyOf(store);
      const first = decodeSyncToken((await feed('since=0&limit=2', userKey)).body.next_since, serviceKey);
      const second = decodeSyncToken(
        (await feed(`since=${encodeSyncToken(first, serviceKey)}&limit=2`, userKey)).body.next_since,
        serviceKey,
      );
      expect(second.listedThrough).not.toBeNull();
      expect(second.issuedAt).toBe(first.issuedAt);
      const aged = encodeSyncToken({ ...second, issuedAt: Date.now() - 31 * 86_400_000 }, serviceKey);
      expect((await feed(`since=${aged}&limit=2`, userKey)).status).toBe(410);
    });

    it.each([1, 2, 3])(
      'with deletes, merges, inserts, edits and moves between every page, ends equal to the listing (seed %i)',
      async (seed) => {
        const random = prng(seed);
        const pick = <T>(items: readonly T[]) => items[Math.floor(random() * items.length)];
        const user = await createUser(store);
        const userKey = (await createKey(store, user.id)).key;
        const start = Date.parse('2024-01-01T00:00:00.000Z');
        await importNumberedContacts(store, user.id, 60, 'Walk', start);
        // Contacts a microsecond apart within one millisecond (PostgreSQL keeps microseconds): the walk's place in the
        // list order must not round them together.
        for (const micros of [1, 2, 3]) {
          const at = other.instant(start + 30, micros);
          const notSelf = db().backend === 'sqlite' ? 0 : false;
          await other.run(
            'INSERT INTO contacts (id, owner_id, is_self, name, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?)',
            randomUUID(),
            user.id,
            notSelf,
            `Micro ${micros}`,
            at,
            at,
          );
        }
        const touched = new Set<string>();
        let written = 0;
        const writeSomething = async () => {
          const ids = [...(await listed(user.id)).keys()];
          const [a, b] = [pick(ids)!, pick(ids)!];
          written += 1;
          switch (Math.floor(random() * 6)) {
            case 0:
              touched.add(a);
              await store.contacts.delete(user.id, [a]);
              break;
            case 1:
              if (a === b) return;
              touched.add(a).add(b);
              await store.contacts.merge(user.id, a, b);
              break;
            case 2: {
              // At the end of the list order, or before every contact (behind any walk's place).
              const id = randomUUID();
              touched.add(id);
              const at = new Date(random() < 0.5 ? Date.now() : start - 1000 + written).toISOString();
              await store.contacts.importContacts(user.id, [contactRecord({ name: `Inserted ${written}`, created_at: at }, id)]);
              break;
            }
            case 3:
              touched.add(a);
              await store.contacts.importContacts(user.id, [contactRecord({ name: `Edited ${written}` }, a)]);
              break;
            case 4: {
              // Moved in the list order, ahead of the walk or behind it.
              touched.add(a);
              const at = new Date(start + Math.floor(random() * 120) - 30).toISOString();
              await store.contacts.importContacts(user.id, [contactRecord({ created_at: at }, a)]);
              break;
            }
            default:
              touched.add(a);
              await other.run('DELETE FROM contacts WHERE id = ?', a);
          }
        };

        const copy = new Map<string, Contact>();
        const upserts = new Map<string, number>();
        let token = '0';
        for (let page = 0; ; page += 1) {
          const { status, body } = await feed(`since=${token}&limit=7`, userKey);
          expect(status, JSON.stringify(body)).toBe(200);
          const ids = body.data.map((change) => change.id);
          expect(new Set(ids).size, 'a contact appears once per answer').toBe(ids.length);
          for (const change of body.data) {
            if (change.type === 'upsert') {
              copy.set(change.id, change.contact!);
              upserts.set(change.id, (upserts.get(change.id) ?? 0) + 1);
            } else copy.delete(change.id);
          }
          token = body.next_since;
          if (!body.has_more) break;
          expect(page, 'the walk ends').toBeLessThan(200);
          for (let i = 0; i < 3; i += 1) await writeSomething();
        }
        expect(Object.fromEntries(copy)).toEqual(Object.fromEntries(await listed(user.id)));
        // A contact nobody wrote during the walk is sent once.
        for (const [id, count] of upserts) if (!touched.has(id)) expect({ id, count }).toEqual({ id, count: 1 });
        expect((await feed(`since=${token}`, userKey)).body.data).toEqual([]);
      },
    );
  });

  it('prunes changes older than a cutoff, in bounded batches', async () => {
    const id = randomUUID();
    await store.contacts.importContacts(owner.id, [contactRecord({ name: 'Old' }, id)]);
    const before = await other.rows<{ n: number | string }>('SELECT count(*) AS n FROM contact_changes');
    const total = Number(before[0]!.n);
    expect(await store.pruneChanges(new Date(Date.now() + 60_000).toISOString(), 2)).toBe(Math.min(2, total));
    const after = await other.rows<{ n: number | string }>('SELECT count(*) AS n FROM contact_changes');
    expect(Number(after[0]!.n)).toBe(total - Math.min(2, total));
  });
});
