import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { InputError } from '../../src/domain/errors.js';
import { createWebhook } from '../../src/operations/webhooks.js';
import type { ChangeRecord, Store, User } from '../../src/store/store.js';
import { describeEachBackend } from '../support/backends.js';
import { openOtherConnection, type OtherConnection } from '../support/other-connection.js';
import { contactRecord, createUser } from '../support/seed.js';
import { rejection } from '../support/thrown.js';

/** A record as a reader that names its changes sees it: id, kind, and the names it carries. */
function named(record: ChangeRecord) {
  const { state } = record;
  if (state.kind === 'listable') return [record.contactId, 'listable', (JSON.parse(state.json) as { name: string | null }).name];
  if (state.kind === 'merged') return [record.contactId, 'merged', state.name, state.mergedInto, state.mergedIntoName];
  return [record.contactId, 'gone', state.name];
}

describeEachBackend('Store contract: names in the change log', (db) => {
  let store: Store;
  let owner: User;
  let other: OtherConnection;

  const importNamed = async (ownerId: string, name: string, id = randomUUID()) => {
    await store.contacts.importContacts(ownerId, [contactRecord({ name }, id)]);
    return id;
  };
  const changesAfter = async (seq: number) => (await store.contacts.readChanges(owner.id, { seq, after: null }, 100)).records.map(named);

  beforeAll(async () => {
    store = db().store;
    owner = await createUser(store);
    other = await openOtherConnection(db());
  });

  afterAll(async () => {
    await other.close();
  });

  it('names a merged contact and its survivor, and a deleted contact by the name it had', async () => {
    const survivor = await importNamed(owner.id, 'Ada Lovelace');
    const duplicate = await importNamed(owner.id, 'Ada L.');
    const deleted = await importNamed(owner.id, 'Charles Babbage');
    const start = (await store.contacts.changeLog(owner.id)).currentSeq;

    await store.contacts.merge(owner.id, duplicate, survivor);
    await store.contacts.delete(owner.id, [deleted]);
    expect(await changesAfter(start)).toEqual([
      [duplicate, 'merged', 'Ada L.', survivor, 'Ada Lovelace'],
      [deleted, 'gone', 'Charles Babbage'],
    ]);

    // Deleting the survivor takes its duplicate with it: both are named as they were.
    const beforeDelete = (await store.contacts.changeLog(owner.id)).currentSeq;
    await store.contacts.delete(owner.id, [survivor]);
    expect((await changesAfter(beforeDelete)).sort()).toEqual(
      [
        [survivor, 'gone', 'Ada Lovelace'],
        [duplicate, 'gone', 'Ada L.'],
      ].sort(),
    );
  });

  it('names a contact written again after its deletion as its row is now', async () => {
    const id = await importNamed(owner.id, 'Grace Hopper');
    await store.contacts.delete(owner.id, [id]);
    const start = (await store.contacts.changeLog(owner.id)).currentSeq;
    await importNamed(owner.id, 'Grace B. Hopper', id);
    expect(await changesAfter(start)).toEqual([[id, 'listable', 'Grace B. Hopper']]);
  });

  it('never names a contact from another owner’s row, nor shows another owner’s deletions', async () => {
    const stranger = await createUser(store);
    const start = (await store.contacts.changeLog(owner.id)).currentSeq;
    const theirs = await importNamed(stranger.id, 'Their Contact');
    await store.contacts.delete(stranger.id, [theirs]);
    expect(await changesAfter(start)).toEqual([]);

    // A host product moving a contact to another owner: the first owner sees it go, without the new owner's data.
    const moved = await importNamed(owner.id, 'Moved Away');
    const beforeMove = (await store.contacts.changeLog(owner.id)).currentSeq;
    await other.run('UPDATE contacts SET owner_id = ?, name = ? WHERE id = ?', stranger.id, 'Renamed By Them', moved);
    expect(await changesAfter(beforeMove)).toEqual([[moved, 'gone', null]]);
  });

  it('finds the position of a time, and refuses a time before a TRUNCATE cleared the log (PostgreSQL)', async ({ skip }) => {
    const first = await importNamed(owner.id, 'Before The Time');
    await sleep(15);
    const time = new Date().toISOString();
    await sleep(15);
    const second = await importNamed(owner.id, 'After The Time');
    const position = await store.contacts.positionAt(owner.id, time);
    expect(position).not.toBeNull();
    const since = (await store.contacts.readChanges(owner.id, position!, 100)).records.map((record) => record.contactId);
    expect(since).toContain(second);
    expect(since).not.toContain(first);

    // SQLite has no TRUNCATE: its log is only ever cut by the retention.
    if (db().backend === 'sqlite') skip();
    await other.run('TRUNCATE contacts CASCADE');
    await sleep(15);
    const afterTruncate = new Date().toISOString();
    expect(await store.contacts.positionAt(owner.id, time)).toBeNull();
    const log = await store.contacts.changeLog(owner.id);
    expect(await store.contacts.positionAt(owner.id, afterTruncate)).toEqual({ seq: log.currentSeq, after: null });
    // A webhook cannot start from there either: it would never deliver the removals.
    const policy = { allowPrivate: false, retentionMs: 86_400_000 };
    const refused = await rejection(
      createWebhook(store, { user: owner.id, url: 'https://hooks.example.com/', since: time }, policy),
      InputError,
    );
    expect(refused.message).toMatch(/^since is before the change log was last cleared \(contacts were truncated\)/);
    await createWebhook(store, { user: owner.id, url: 'https://hooks.example.com/', since: afterTruncate }, policy);
  });
});
