import { beforeAll, describe, expect, it } from 'vitest';
import type { Contact } from '../../src/domain/contact.js';
import type { Store } from '../../src/store/store.js';
import { describeEachBackend } from '../support/backends.js';
import { contactRecord, createUser } from '../support/seed.js';
import { selfContactId } from '../support/self-contact.js';

describeEachBackend('ContactStore.get', (db) => {
  let store: Store;
  let ownerId: string;
  let otherId: string;
  let contacts: Contact[];
  let otherContacts: Contact[];
  const named = (name: string, from = contacts) => from.find((contact) => contact.name === name)!;

  beforeAll(async () => {
    store = db().store;
    ownerId = (await createUser(store)).id;
    otherId = (await createUser(store)).id;
    // Interleaved writes of two users, so a lookup that ignored the owner would find the other's rows.
    await store.contacts.importContacts(ownerId, [contactRecord({ name: 'Survivor', tags: ['a'], research_data: { note: 'x' } })]);
    await store.contacts.importContacts(otherId, [contactRecord({ name: 'Other Survivor' }), contactRecord({ name: 'Other Duplicate' })]);
    await store.contacts.importContacts(ownerId, [contactRecord({ name: 'Duplicate' }), contactRecord({ name: 'Older Duplicate' })]);
    contacts = (await store.contacts.listPage(ownerId, { limit: 100, offset: 0 })).contacts;
    otherContacts = (await store.contacts.listPage(otherId, { limit: 100, offset: 0 })).contacts;
    // Older Duplicate → Duplicate, then Duplicate → Survivor: merge() flattens the chain to one step.
    await store.contacts.merge(ownerId, named('Older Duplicate').id, named('Duplicate').id);
    await store.contacts.merge(ownerId, named('Duplicate').id, named('Survivor').id);
    await store.contacts.merge(otherId, named('Other Duplicate', otherContacts).id, named('Other Survivor', otherContacts).id);
  });

  it('returns the owner’s contact exactly as the list shows it, not merged', async () => {
    const survivor = named('Survivor');
    expect(await store.contacts.get(ownerId, survivor.id)).toEqual({ contact: survivor, mergedFrom: null });
  });

  it('accepts the id in upper case', async () => {
    const survivor = named('Survivor');
    expect(await store.contacts.get(ownerId, survivor.id.toUpperCase())).toEqual({ contact: survivor, mergedFrom: null });
  });

  it('resolves a soft-merged id to the surviving contact and names the id asked for', async () => {
    const survivor = named('Survivor');
    const duplicate = named('Duplicate');
    expect(await store.contacts.get(ownerId, duplicate.id)).toEqual({ contact: survivor, mergedFrom: duplicate.id });
    expect(await store.contacts.get(ownerId, duplicate.id.toUpperCase())).toEqual({ contact: survivor, mergedFrom: duplicate.id });
  });

  it('resolves an id merged into a contact that was merged later', async () => {
    const older = named('Older Duplicate');
    expect(await store.contacts.get(ownerId, older.id)).toEqual({ contact: named('Survivor'), mergedFrom: older.id });
  });

  describe('finds nothing, alike, for what the owner may not see', () => {
    it('another user’s contact, merged or not', async () => {
      expect(await store.contacts.get(ownerId, named('Other Survivor', otherContacts).id)).toBeNull();
      expect(await store.contacts.get(ownerId, named('Other Duplicate', otherContacts).id)).toBeNull();
    });

    it('the owner’s own self row', async () => {
      expect(await store.contacts.get(ownerId, await selfContactId(db().databaseUrl, ownerId))).toBeNull();
    });

    it('an unknown id and malformed ids', async () => {
      for (const id of ['0190a1b2-0000-7000-8000-000000000000', '', 'abc', 'not-a-uuid', `${named('Survivor').id}x`, "' OR 1=1 --"]) {
        expect(await store.contacts.get(ownerId, id), id).toBeNull();
      }
    });

    it('any id when the owner is unknown', async () => {
      expect(await store.contacts.get(otherId.replace(/^.{8}/, '00000000'), named('Survivor').id)).toBeNull();
    });
  });
});
