import { beforeAll, describe, expect, it } from 'vitest';
import type { Contact } from '../../src/domain/contact.js';
import { InputError } from '../../src/domain/errors.js';
import { GET_MANY_MAX_IDS } from '../../src/store/get-many.js';
import type { Store } from '../../src/store/store.js';
import { describeEachBackend } from '../support/backends.js';
import { contactRecord, createUser } from '../support/seed.js';
import { selfContactId } from '../support/self-contact.js';

describeEachBackend('ContactStore.get and getMany', (db) => {
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
    await store.contacts.importContacts(ownerId, [
      contactRecord({ name: 'Duplicate' }),
      contactRecord({ name: 'Older Duplicate' }),
      contactRecord({ name: 'Second' }),
    ]);
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

  describe('getMany', () => {
    const idsOf = async (ids: readonly string[]) => (await store.contacts.getMany(ownerId, ids)).map((listed) => listed.key.id);

    it('returns the owner’s listable contacts among the ids in list order, as readListed gives them', async () => {
      const listed = (await store.contacts.readListed(ownerId, null, 100)).contacts;
      expect(listed.map((entry) => JSON.parse(entry.json) as Contact)).toEqual([named('Survivor'), named('Second')]);
      expect(await store.contacts.getMany(ownerId, [named('Second').id, named('Survivor').id])).toEqual(listed);
    });

    it('leaves out merged ids, the self row, another owner’s, unknown and malformed ids', async () => {
      const asked = [
        named('Duplicate').id,
        named('Older Duplicate').id,
        await selfContactId(db().databaseUrl, ownerId),
        named('Other Survivor', otherContacts).id,
        named('Other Duplicate', otherContacts).id,
        '0190a1b2-0000-7000-8000-000000000000',
        '',
        'not-a-uuid',
        `${named('Second').id}x`,
        "' OR 1=1 --",
        named('Second').id,
      ];
      expect(await idsOf(asked)).toEqual([named('Second').id]);
    });

    it('returns each contact once, whatever the case or repetition of its id', async () => {
      const { id } = named('Survivor');
      expect(await idsOf([id, id.toUpperCase(), id])).toEqual([id]);
    });

    it('returns nothing for no ids, or for an unknown owner', async () => {
      expect(await store.contacts.getMany(ownerId, [])).toEqual([]);
      expect(await store.contacts.getMany(otherId.replace(/^.{8}/, '00000000'), [named('Survivor').id])).toEqual([]);
    });

    it(`takes at most ${GET_MANY_MAX_IDS} ids`, async () => {
      const ids = Array.from({ length: GET_MANY_MAX_IDS }, () => named('Survivor').id);
      expect(await idsOf(ids)).toEqual([named('Survivor').id]);
      await expect(store.contacts.getMany(ownerId, [...ids, named('Second').id])).rejects.toThrow(InputError);
    });
  });
});
