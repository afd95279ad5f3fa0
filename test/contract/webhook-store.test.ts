import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, afterEach, beforeAll, expect, it } from 'vitest';
import type { ChangePosition } from '../../src/domain/changes.js';
import { newId } from '../../src/domain/ids.js';
import { openStore } from '../../src/store/open-store.js';
import { parseDatabaseUrl } from '../../src/domain/database-url.js';
import type { NewWebhook, Store, User, WebhookDelivery, WebhookLeaseLane } from '../../src/store/store.js';
import { describeEachBackend } from '../support/backends.js';
import { openOtherConnection, type OtherConnection } from '../support/other-connection.js';
import { contactRecord, createUser } from '../support/seed.js';

const T0 = Date.parse('2026-01-01T00:00:00.000Z');
const at = (offsetMs: number) => new Date(T0 + offsetMs).toISOString();
const LEASE_MS = 30_000;
const ALL_EVENTS = ['contact.upserted', 'contact.merged', 'contact.deleted'] as const;

/** Webhook endpoints and their delivery state, the same on both databases: the dispatcher's leases above all. */
describeEachBackend('Store contract: webhooks', (db) => {
  let store: Store;
  let owner: User;
  let other: OtherConnection;

  const newWebhook = (ownerId: string, cursor: ChangePosition, fields: Partial<NewWebhook> = {}): NewWebhook => ({
    id: newId(),
    ownerId,
    url: 'https://receiver.example/hooks',
    events: [...ALL_EVENTS],
    description: null,
    sealedSecret: `v1.sealed-${randomUUID()}`,
    cursor,
    pendingSince: at(0),
    ...fields,
  });
  /** An endpoint of `ownerId` at the end of the owner's log: no work until the owner's contacts change. */
  const caughtUp = async (ownerId = owner.id, fields: Partial<NewWebhook> = {}) => {
    const log = await store.contacts.changeLog(ownerId);
    return store.webhooks.create(newWebhook(ownerId, { seq: log.currentSeq, after: null }, fields));
  };
  const importOne = async (ownerId = owner.id, id = randomUUID()) => {
    await store.contacts.importContacts(ownerId, [contactRecord({ name: `Contact ${id}` }, id)]);
    return id;
  };
  /** One lane's lease (every owner's share `limit` unless given), as ids in the order leased. */
  const leaseLane = async (holder: string, now: string, lane: Partial<WebhookLeaseLane> & { limit: number }, from = store) => {
    const leased = await from.webhooks.leaseDue(holder, now, new Date(Date.parse(now) + LEASE_MS).toISOString(), {
      retrying: false,
      perOwner: lane.limit,
      ...lane,
    });
    return leased.map((record) => record.id);
  };
  /** Both lanes' leases: endpoints with changes, then those whose retry is due, at most `limit` in all. */
  const leasedIds = async (holder: string, now = at(0), limit = 100, from = store) => {
    const current = await leaseLane(holder, now, { limit }, from);
    return [...current, ...(await leaseLane(holder, now, { retrying: true, limit: limit - current.length }, from))];
  };

  beforeAll(async () => {
    store = db().store;
    owner = await createUser(store);
    other = await openOtherConnection(db());
  });
  afterAll(async () => {
    await other.close();
  });
  // Leases are across every owner: each test starts with no endpoint.
  afterEach(async () => {
    await other.run('DELETE FROM webhooks');
  });

  it('keeps an endpoint as given (the sealed secrets untouched), finds it by id in any case, lists the owner’s oldest first', async () => {
    const first = await store.webhooks.create(
      newWebhook(owner.id, { seq: 3, after: null }, { description: 'CRM sync', events: ['contact.deleted'], sealedSecret: 'v1.AbC-_x' }),
    );
    expect(first).toEqual({
      id: expect.any(String),
      ownerId: owner.id,
      url: 'https://receiver.example/hooks',
      events: ['contact.deleted'],
      description: 'CRM sync',
      status: 'enabled',
      disabledReason: null,
      sealedSecret: 'v1.AbC-_x',
      sealedPreviousSecret: null,
      previousSecretUntil: null,
      cursor: { seq: 3, after: null },
      pendingSince: at(0),
      failedAttempts: 0,
      nextAttemptAt: null,
      createdAt: expect.stringMatching(/Z$/),
      updatedAt: first.createdAt,
    });
    const second = await caughtUp();
    expect(await store.webhooks.get(first.id.toUpperCase())).toEqual(first);
    expect(await store.webhooks.get('not-a-uuid')).toBeNull();
    expect(await store.webhooks.get(randomUUID())).toBeNull();
    expect((await store.webhooks.listByOwner(owner.id)).map((record) => record.id)).toEqual([first.id, second.id]);
    expect(await store.webhooks.listByOwner(randomUUID())).toEqual([]);
  });

  it('updates the fields named; enabling clears the reason and the retry state; deleting removes it', async () => {
    const created = await caughtUp();
    const disabled = await store.webhooks.update(created.id, { status: 'disabled', disabledReason: 'disabled by an admin' }, at(5));
    expect(disabled).toMatchObject({ status: 'disabled', disabledReason: 'disabled by an admin', url: created.url, updatedAt: at(5) });
    const changed = await store.webhooks.update(
      created.id,
      {
        url: 'https://other.example/h',
        events: ['contact.merged'],
        description: 'x',
        cursor: { seq: 7, after: null },
        pendingSince: at(6),
      },
      at(6),
    );
    expect(changed).toMatchObject({
      url: 'https://other.example/h',
      events: ['contact.merged'],
      description: 'x',
      status: 'disabled',
      disabledReason: 'disabled by an admin',
      cursor: { seq: 7, after: null },
      pendingSince: at(6),
    });
    expect(await store.webhooks.update(created.id, { description: null }, at(7))).toMatchObject({ description: null, url: changed!.url });
    await other.run('UPDATE webhooks SET failed_attempts = 4, next_attempt_at = ? WHERE id = ?', at(60_000), created.id);
    expect(await store.webhooks.update(created.id, { status: 'enabled' }, at(8))).toMatchObject({
      status: 'enabled',
      disabledReason: null,
      failedAttempts: 0,
      nextAttemptAt: null,
    });
    expect(await store.webhooks.update(randomUUID(), { status: 'enabled' }, at(8))).toBeNull();
    expect(await store.webhooks.delete(created.id)).toBe(true);
    expect(await store.webhooks.delete(created.id)).toBe(false);
    expect(await store.webhooks.get(created.id)).toBeNull();
  });

  it('a rotation keeps the current secret as the previous one until the time given', async () => {
    const created = await caughtUp(owner.id, { sealedSecret: 'v1.first' });
    const rotated = await store.webhooks.rotateSecret(created.id, 'v1.second', at(86_400_000), at(1));
    expect(rotated).toMatchObject({ sealedSecret: 'v1.second', sealedPreviousSecret: 'v1.first', previousSecretUntil: at(86_400_000) });
    const again = await store.webhooks.rotateSecret(created.id, 'v1.third', at(86_400_001), at(2));
    expect(again).toMatchObject({ sealedSecret: 'v1.third', sealedPreviousSecret: 'v1.second' });
    expect(await store.webhooks.rotateSecret(randomUUID(), 'v1.x', at(0), at(0))).toBeNull();
  });

  it('leases only enabled endpoints with work: changes past the cursor, or a retry that is due', async () => {
    const user = await createUser(store);
    const idle = await caughtUp(user.id);
    expect(await leasedIds('h')).toEqual([]);

    const disabled = await caughtUp(user.id);
    await store.webhooks.update(disabled.id, { status: 'disabled' }, at(0));
    const contact = await importOne(user.id);
    const log = await store.contacts.changeLog(user.id);
    // Stopped within the last seq: there may be more of it.
    const withinSeq = await store.webhooks.create(newWebhook(user.id, { seq: log.currentSeq, after: contact }));
    expect((await leasedIds('h')).sort()).toEqual([idle.id, withinSeq.id].sort());
    expect(await leasedIds('h2')).toEqual([]);

    // A failure waits for its retry even though changes wait too.
    expect(await store.webhooks.scheduleRetry(idle.id, 'h', 1, at(5_000), at(0))).toBe(true);
    expect(await store.webhooks.advance(withinSeq.id, 'h', { seq: log.currentSeq, after: null }, at(0), at(0))).toBe(true);
    await store.webhooks.releaseLease(idle.id, 'h');
    await store.webhooks.releaseLease(withinSeq.id, 'h');
    expect(await leasedIds('h', at(4_999))).toEqual([]);
    expect(await leasedIds('h', at(5_000))).toEqual([idle.id]);
    expect(await store.webhooks.get(idle.id)).toMatchObject({ failedAttempts: 1, nextAttemptAt: at(5_000) });
    expect(await store.webhooks.advance(idle.id, 'h', { seq: log.currentSeq, after: null }, at(5_000), at(5_000))).toBe(true);
    expect(await store.webhooks.get(idle.id)).toMatchObject({
      failedAttempts: 0,
      nextAttemptAt: null,
      cursor: { seq: log.currentSeq, after: null },
    });
    await store.webhooks.releaseLease(idle.id, 'h');
    expect(await leasedIds('h', at(6_000))).toEqual([]);
  });

  it('takes at most `limit`, the longest waiting first', async () => {
    const user = await createUser(store);
    const endpoints = [];
    for (const offset of [3, 1, 2]) endpoints.push(await caughtUp(user.id, { pendingSince: at(offset) }));
    await importOne(user.id);
    expect((await leasedIds('h', at(10), 2)).sort()).toEqual([endpoints[1]!.id, endpoints[2]!.id].sort());
    expect(await leasedIds('h2', at(10), 2)).toEqual([endpoints[0]!.id]);
  });

  it('goes round the owners, and leases a holder at most `perOwner` endpoints of one owner in a lane', async () => {
    const [busy, quiet] = [await createUser(store), await createUser(store)];
    const busyIds: string[] = [];
    for (const offset of [1, 2, 3, 4, 5]) busyIds.push((await caughtUp(busy.id, { pendingSince: at(offset) })).id);
    const quietId = (await caughtUp(quiet.id, { pendingSince: at(9) })).id;
    await importOne(busy.id);
    await importOne(quiet.id);
    const lease = (holder: string, limit: number) => leaseLane(holder, at(10), { limit, perOwner: 2 }).then((ids) => ids.sort());
    // The quiet owner's endpoint waited least, yet comes second: every owner's first endpoint before anyone's second.
    expect(await lease('h', 2)).toEqual([busyIds[0]!, quietId].sort());
    // The holder holds one of the busy owner's already: one more is its share.
    expect(await lease('h', 10)).toEqual([busyIds[1]]);
    expect(await lease('h', 10)).toEqual([]);
    expect(await lease('h2', 10)).toEqual([busyIds[2]!, busyIds[3]!].sort());
    // A lease given back frees its place in the share: the endpoint, still due and the longest waiting, takes it again.
    await store.webhooks.releaseLease(busyIds[0]!, 'h');
    expect(await lease('h', 10)).toEqual([busyIds[0]]);
  });

  it('leases the endpoints whose retry is due in a lane of their own, each lane with its own share of an owner', async () => {
    const user = await createUser(store);
    const failing = await caughtUp(user.id, { pendingSince: at(1) });
    const current = await caughtUp(user.id, { pendingSince: at(2) });
    await importOne(user.id);
    expect(await leaseLane('h', at(10), { limit: 1 })).toEqual([failing.id]);
    expect(await store.webhooks.scheduleRetry(failing.id, 'h', 1, at(5_000), at(10))).toBe(true);
    await store.webhooks.releaseLease(failing.id, 'h');
    expect(await leaseLane('h', at(5_000), { retrying: true, limit: 10, perOwner: 1 })).toEqual([failing.id]);
    // The owner's retrying endpoint is not counted in the other lane's share, nor leased there.
    expect(await leaseLane('h', at(5_000), { limit: 10, perOwner: 1 })).toEqual([current.id]);
    await store.webhooks.releaseLease(failing.id, 'h');
    expect(await leaseLane('h2', at(5_000), { limit: 10 })).toEqual([]);
    expect(await leaseLane('h2', at(5_000), { retrying: true, limit: 10 })).toEqual([failing.id]);
  });

  it('never leases one endpoint to two holders, even when they ask at once from two stores', async () => {
    // SQLite has one writer at a time, and better-sqlite3 waits for the lock synchronously: a second store in this
    // process would stall the first, so its concurrent calls go through one store (one write transaction each).
    const second = db().backend !== 'sqlite' ? await openStore(parseDatabaseUrl(db().databaseUrl)) : store;
    try {
      const users = await Promise.all(Array.from({ length: 4 }, () => createUser(store)));
      const endpoints = [];
      for (const user of users) for (let index = 0; index < 6; index += 1) endpoints.push((await caughtUp(user.id)).id);
      for (const user of users) await importOne(user.id);
      const rounds = await Promise.all(
        Array.from({ length: 12 }, (_, index) => leasedIds(`holder-${index}`, at(0), 3, index % 2 === 0 ? store : second)),
      );
      const leased = rounds.flat();
      expect(new Set(leased).size).toBe(leased.length);
      // Whatever a skipped lock left is leased by a later call, still once.
      const rest = await leasedIds('late', at(0), 100, second);
      expect([...leased, ...rest].sort()).toEqual([...endpoints].sort());
      const holders = await other.rows<{ lease_holder: string }>('SELECT DISTINCT lease_holder FROM webhooks');
      expect(holders.length).toBeGreaterThan(1);
    } finally {
      if (second !== store) await second.close();
    }
  });

  it('an expired lease lets another holder take over; the first holder’s writes are then refused', async () => {
    const user = await createUser(store);
    const endpoint = await caughtUp(user.id);
    await importOne(user.id);
    expect(await leasedIds('a', at(0))).toEqual([endpoint.id]);
    expect(await store.webhooks.renewLease(endpoint.id, 'a', at(LEASE_MS + 10_000))).toBe(true);
    expect(await leasedIds('b', at(LEASE_MS + 5_000))).toEqual([]);
    expect(await leasedIds('b', at(LEASE_MS + 10_001))).toEqual([endpoint.id]);

    const position = { seq: 99, after: null };
    expect(await store.webhooks.renewLease(endpoint.id, 'a', at(LEASE_MS * 3))).toBe(false);
    expect(await store.webhooks.advance(endpoint.id, 'a', position, at(1), at(1))).toBe(false);
    expect(await store.webhooks.scheduleRetry(endpoint.id, 'a', 1, at(1), at(1))).toBe(false);
    expect(await store.webhooks.disable(endpoint.id, 'a', 'gone', at(1))).toBe(false);
    await store.webhooks.releaseLease(endpoint.id, 'a');
    expect(await store.webhooks.get(endpoint.id)).toMatchObject({ status: 'enabled', cursor: endpoint.cursor, failedAttempts: 0 });
    expect(await leasedIds('c', at(LEASE_MS + 10_002))).toEqual([]);

    expect(await store.webhooks.disable(endpoint.id, 'b', 'the receiver answered 410 Gone', at(2))).toBe(true);
    expect(await store.webhooks.get(endpoint.id)).toMatchObject({ status: 'disabled', disabledReason: 'the receiver answered 410 Gone' });
    expect(await store.webhooks.advance(endpoint.id, 'b', position, at(3), at(3))).toBe(false);
    expect(await leasedIds('c', at(LEASE_MS * 10))).toEqual([]);
    expect(await store.webhooks.countByStatus()).toEqual({ enabled: 0, disabled: 1 });
  });

  it('an admin’s change of status or cursor ends the lease: the holder’s next write is refused', async () => {
    const user = await createUser(store);
    const endpoint = await caughtUp(user.id);
    await importOne(user.id);
    expect(await leasedIds('a')).toEqual([endpoint.id]);
    await store.webhooks.update(endpoint.id, { description: 'renamed' }, at(1));
    expect(await store.webhooks.renewLease(endpoint.id, 'a', at(LEASE_MS))).toBe(true);
    await store.webhooks.update(endpoint.id, { cursor: { seq: 0, after: null } }, at(2));
    expect(await store.webhooks.advance(endpoint.id, 'a', { seq: 99, after: null }, at(3), at(3))).toBe(false);
    expect((await store.webhooks.get(endpoint.id))!.cursor).toEqual({ seq: 0, after: null });
    expect(await leasedIds('b', at(4))).toEqual([endpoint.id]);
  });

  it('lists an endpoint’s attempts latest first, prunes them by age, and keeps none for an endpoint that is gone', async () => {
    const endpoint = await caughtUp();
    const attempt = (offset: number, fields: Partial<WebhookDelivery> = {}): WebhookDelivery => ({
      webhookId: endpoint.id,
      eventId: `msg_${offset}`,
      type: 'contact.upserted',
      attempt: 1,
      statusCode: 200,
      error: null,
      durationMs: offset,
      attemptedAt: at(offset),
      ...fields,
    });
    await store.webhooks.recordDeliveries([
      attempt(1),
      attempt(3, { statusCode: 500, error: 'HTTP 500: oops', attempt: 2, type: 'contact.merged' }),
      attempt(2, { statusCode: null, error: 'timed out after 15000 ms' }),
    ]);
    await store.webhooks.recordDeliveries([attempt(4), { ...attempt(5), webhookId: randomUUID() }]);
    await store.webhooks.recordDeliveries([]);
    expect(await store.webhooks.listDeliveries(endpoint.id, 3)).toEqual([
      attempt(4),
      attempt(3, { statusCode: 500, error: 'HTTP 500: oops', attempt: 2, type: 'contact.merged' }),
      attempt(2, { statusCode: null, error: 'timed out after 15000 ms' }),
    ]);
    expect(await store.webhooks.listDeliveries('nope', 3)).toEqual([]);
    expect(await store.webhooks.pruneDeliveries(at(3), 1)).toBe(1);
    expect(await store.webhooks.pruneDeliveries(at(3), 10)).toBe(1);
    expect((await store.webhooks.listDeliveries(endpoint.id, 10)).map((delivery) => delivery.eventId)).toEqual(['msg_4', 'msg_3']);
    await store.webhooks.delete(endpoint.id);
    expect(await other.rows('SELECT event_id FROM webhook_deliveries')).toEqual([]);
  });

  it('deleting a user removes the user’s endpoints and their attempts in the same transaction', async () => {
    const user = await createUser(store);
    const endpoint = await caughtUp(user.id);
    const kept = await caughtUp();
    const delivery = (webhookId: string): WebhookDelivery => ({
      webhookId,
      eventId: 'msg_x',
      type: 'contact.deleted',
      attempt: 1,
      statusCode: 204,
      error: null,
      durationMs: 3,
      attemptedAt: at(0),
    });
    await store.webhooks.recordDeliveries([delivery(endpoint.id), delivery(kept.id)]);
    expect(await store.users.delete(user.id)).toBe(true);
    expect(await store.webhooks.get(endpoint.id)).toBeNull();
    expect(await other.rows('SELECT webhook_id FROM webhook_deliveries')).toEqual([{ webhook_id: kept.id }]);
    expect(await store.webhooks.listDeliveries(kept.id, 10)).toEqual([delivery(kept.id)]);
  });

  it('counts changes after a position and finds the position before a time, over imports, merges and deletes', async () => {
    const user = await createUser(store);
    const { contacts } = store;
    const start = await contacts.changeLog(user.id);
    expect(await contacts.countChangesAfter(user.id, { seq: start.currentSeq, after: null })).toBe(0);
    await sleep(15);
    const beforeImport = new Date().toISOString();
    await sleep(15);
    const ids = [randomUUID(), randomUUID(), randomUUID()].sort();
    await contacts.importContacts(
      user.id,
      ids.map((id) => contactRecord({ name: id }, id)),
    );
    const imported = await contacts.changeLog(user.id);
    await sleep(15);
    const afterImport = new Date().toISOString();
    await sleep(15);
    expect(await contacts.countChangesAfter(user.id, { seq: start.currentSeq, after: null })).toBe(3);
    const [first] = (await contacts.readChanges(user.id, { seq: start.currentSeq, after: null }, 1)).records;
    expect(await contacts.countChangesAfter(user.id, { seq: first!.seq, after: first!.contactId })).toBe(2);
    expect(await contacts.countChangesAfter(user.id, { seq: imported.currentSeq, after: null })).toBe(0);

    const fromImport = await contacts.positionAt(user.id, beforeImport);
    expect(fromImport).toEqual({ seq: start.currentSeq, after: null });
    expect((await contacts.readChanges(user.id, fromImport!, 10)).records.map((record) => record.contactId)).toEqual(ids);
    expect(await contacts.positionAt(user.id, afterImport)).toEqual({ seq: imported.currentSeq, after: null });

    await contacts.merge(user.id, ids[0]!, ids[1]!);
    await contacts.delete(user.id, [ids[2]!]);
    const now = await contacts.changeLog(user.id);
    // The merge touched the duplicate alone; the log keeps each contact's last change only.
    expect(await contacts.countChangesAfter(user.id, { seq: imported.currentSeq, after: null })).toBe(2);
    expect(await contacts.countChangesAfter(user.id, { seq: start.currentSeq, after: null })).toBe(3);
    const sinceImport = await contacts.positionAt(user.id, afterImport);
    expect(sinceImport!.seq).toBeGreaterThanOrEqual(imported.currentSeq);
    expect((await contacts.readChanges(user.id, sinceImport!, 10)).records.map((record) => [record.contactId, record.state.kind])).toEqual([
      [ids[0], 'merged'],
      [ids[2], 'gone'],
    ]);
    expect(await contacts.positionAt(user.id, new Date(Date.now() + 60_000).toISOString())).toEqual({ seq: now.currentSeq, after: null });
    expect(await contacts.positionAt(randomUUID(), beforeImport)).toEqual({ seq: 0, after: null });
    expect(await contacts.countChangesAfter('nope', { seq: 0, after: null })).toBe(0);
  });
});
