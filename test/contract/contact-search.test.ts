import { beforeAll, describe, expect, it } from 'vitest';
import type { Contact, ContactValues } from '../../src/domain/contact.js';
import { InputError } from '../../src/domain/errors.js';
import { searchRank } from '../../src/domain/search.js';
import type { Store } from '../../src/store/store.js';
import { describeEachBackend } from '../support/backends.js';
import { contactRecord, createUser } from '../support/seed.js';

const BASE = Date.parse('2024-01-01T00:00:00.000Z');

/** Contacts created one minute apart in the order given, so list order (created_at, id) is known. */
async function importInOrder(store: Store, ownerId: string, contacts: Partial<ContactValues>[], startMinute = 0): Promise<Contact[]> {
  const records = contacts.map((values, index) => {
    const at = new Date(BASE + (startMinute + index) * 60_000).toISOString();
    return contactRecord({ ...values, created_at: at, updated_at: at });
  });
  await store.contacts.importContacts(ownerId, records);
  return listAll(store, ownerId);
}

async function listAll(store: Store, ownerId: string): Promise<Contact[]> {
  return (await store.contacts.listPage(ownerId, { limit: 100, offset: 0 })).contacts;
}

/** The search result the ranking rule defines: searchRank, then created_at, then id. */
function rankedIds(contacts: readonly Contact[], query: string, limit: number): string[] {
  const text = query.trim();
  return contacts
    .map((contact) => ({ contact, rank: searchRank(text, contact) }))
    .filter((entry): entry is { contact: Contact; rank: NonNullable<typeof entry.rank> } => entry.rank !== null)
    .sort(
      (a, b) =>
        a.rank - b.rank ||
        a.contact.created_at.localeCompare(b.contact.created_at) ||
        (a.contact.id < b.contact.id ? -1 : a.contact.id > b.contact.id ? 1 : 0),
    )
    .slice(0, limit)
    .map((entry) => entry.contact.id);
}

describeEachBackend('ContactStore.search', (db) => {
  let store: Store;
  let ownerId: string;
  let otherId: string;
  let owned: Contact[];
  const byName = (name: string): Contact => owned.find((contact) => contact.name === name)!;
  const names = async (query: string, limit = 50, owner = ownerId) =>
    (await store.contacts.search(owner, query, limit)).map((contact) => contact.name);

  beforeAll(async () => {
    store = db().store;
    // The owner's self row is named like a match ("Ann Self"); it must never be found.
    ownerId = (await createUser(store, 'pro', 'Ann Self')).id;
    otherId = (await createUser(store, 'pro', 'Ann Other')).id;
    // The two users' contacts interleave in time, so any leak across owners would show in the order.
    await importInOrder(store, otherId, [{ name: 'Ann' }, { name: 'Annette Other' }, { name: 'Quasar Other' }], 2);
    owned = await importInOrder(store, ownerId, [
      { name: 'Joanna Planner' },
      { name: 'Mary Ann Evans' },
      { name: 'Zed Zimmer', tags: ['anniversary-club'] },
      { name: 'Annabel Lee' },
      { name: 'Ann' },
      { name: 'Bob Stone', email: 'ann@example.org' },
      { name: 'Carla Hill', company: 'Hann & Partners' },
      { name: 'Ann Duplicate' },
      { name: 'Unrelated Person', phone: 'ann', description: 'Met Ann at a conference', source: 'ann', birthday: 'ann' },
      { name: '100% "Real" Deal_1' },
      { name: 'NEAR(x) AND y*', company: "O'Brien \\ Sons" },
      { name: 'Quasar Name' },
      { name: 'Email Holder', email: 'x.quasar@example.com' },
      { name: 'Company Holder', company: 'Quasar Inc' },
      { name: 'Title Holder', title: 'Quasar Engineer' },
      { name: 'School Holder', school: 'Quasar University' },
      { name: 'Location Holder', location: 'Quasar City' },
      { name: 'Tag Holder', tags: ['friend', 'quasar'] },
      { name: 'Unsearched Holder', phone: 'quasar', linkedin_url: 'https://example.com/quasar', description: 'quasar' },
      { name: 'Émile Zola', title: 'ÉCRIVAIN' },
    ]);
    await store.contacts.merge(ownerId, byName('Ann Duplicate').id, byName('Annabel Lee').id);
    owned = await listAll(store, ownerId);
  });

  describe('ranking: exact name/email, then name/email prefix, then word prefix, then substring; ties in list order', () => {
    it('orders every tier and breaks ties by created_at', async () => {
      expect(await names('ann')).toEqual([
        'Ann', // exact name
        'Annabel Lee', // name prefix (created before Bob Stone)
        'Bob Stone', // email prefix
        'Mary Ann Evans', // word prefix in the name
        'Zed Zimmer', // word prefix: a tag starts with it
        'Joanna Planner', // substring (created first)
        'Carla Hill', // substring in the company
      ]);
    });

    it('agrees with the domain rule searchRank for queries of every length and shape', async () => {
      for (const query of ['ann', 'an', 'a', 'e', 'er', 'quasar', 'QUASAR', ' ann ', 'lee', 'ee', '@', 'example.org', 'y*']) {
        expect(await store.contacts.search(ownerId, query, 50).then((found) => found.map((c) => c.id)), query).toEqual(
          rankedIds(owned, query, 50),
        );
      }
    });

    it('returns at most `limit` contacts, the best ones', async () => {
      expect(await names('ann', 2)).toEqual(['Ann', 'Annabel Lee']);
      expect(await names('ann', 1)).toEqual(['Ann']);
    });
  });

  describe('matching', () => {
    it('is case-insensitive, for the query and the data, beyond ASCII too', async () => {
      expect(await names('ANN')).toEqual(await names('ann'));
      expect(await names('aNn')).toEqual(await names('ann'));
      expect(await names('émile')).toEqual(['Émile Zola']);
      expect(await names('écrivain')).toEqual(['Émile Zola']);
    });

    it('looks in name, email, company, title, school, location and tags — and nowhere else', async () => {
      expect(new Set(await names('quasar'))).toEqual(
        new Set(['Quasar Name', 'Email Holder', 'Company Holder', 'Title Holder', 'School Holder', 'Location Holder', 'Tag Holder']),
      );
      expect(await names('conference')).toEqual([]);
    });

    it('matches a tag by its own text, never across two tags', async () => {
      expect(await names('anniversary-club')).toEqual(['Zed Zimmer']);
      expect(await names('friend')).toEqual(['Tag Holder']);
      expect(await names('friend quasar')).toEqual([]);
      expect(await names('friend","quasar')).toEqual([]);
    });

    it('trims the query', async () => {
      expect(await names('   annabel  ')).toEqual(['Annabel Lee']);
    });
  });

  describe('scope and exclusions (spec §1)', () => {
    it('never returns another user’s contacts', async () => {
      expect(await names('annette')).toEqual([]);
      const other = await names('ann', 50, otherId);
      expect(other).toEqual(['Ann', 'Annette Other']);
      expect(await names('quasar other')).toEqual([]);
    });

    it('never returns the self row or a soft-merged duplicate', async () => {
      expect(await names('self')).toEqual([]);
      expect(await names('duplicate')).toEqual([]);
    });
  });

  describe('special characters are literal text and never an error', () => {
    const cases: [string, string[]][] = [
      ['%', ['100% "Real" Deal_1']],
      ['_', ['100% "Real" Deal_1']],
      ['a%', []],
      ['_eal', []],
      ['deal_1', ['100% "Real" Deal_1']],
      ['"', ['100% "Real" Deal_1']],
      ['"real"', ['100% "Real" Deal_1']],
      ['NEAR(', ['NEAR(x) AND y*']],
      ['*', ['NEAR(x) AND y*']],
      ['y*', ['NEAR(x) AND y*']],
      ['NEAR(x) AND y*', ['NEAR(x) AND y*']],
      ["O'Brien \\", ['NEAR(x) AND y*']],
      ['\\', ['NEAR(x) AND y*']],
    ];
    for (const [query, expected] of cases) {
      it(`${JSON.stringify(query)} finds only the literal text`, async () => {
        expect(await names(query)).toEqual(expected);
      });
    }

    it('FTS and LIKE syntax neither fails nor acts as an operator', async () => {
      for (const query of ['ann*', '"ann"', 'ann OR bob', 'NOT ann', '^ann', 'name:ann', '{name}: ann', '(', ')', 'AND', 'OR', '-ann', 'ann NEAR(bob)', '[a-z]', "'; DROP TABLE contacts; --"]) {
        const found = await store.contacts.search(ownerId, query, 50);
        expect(found.map((contact) => contact.id), query).toEqual(rankedIds(owned, query, 50));
      }
      expect(await names('ann OR bob')).toEqual([]);
    });
  });

  describe('validation (parseSearchRequest)', () => {
    const rejects = (query: string, limit: number, message: string) =>
      expect(store.contacts.search(ownerId, query, limit)).rejects.toThrow(new InputError(message));

    it('refuses an empty or blank query, one over 200 characters, and control characters', async () => {
      await rejects('', 10, '"query" must not be empty');
      await rejects('   ', 10, '"query" must not be empty');
      await rejects('x'.repeat(201), 10, '"query" must be at most 200 characters; got 201');
      await rejects('a\u0000b', 10, '"query" must not contain control characters');
      await expect(store.contacts.search(ownerId, ` ${'q'.repeat(200)} `, 10)).resolves.toEqual([]);
    });

    it('refuses a limit outside 1..50', async () => {
      await rejects('ann', 0, '"limit" must be an integer from 1 to 50; got 0');
      await rejects('ann', 51, '"limit" must be an integer from 1 to 50; got 51');
      await rejects('ann', 1.5, '"limit" must be an integer from 1 to 50; got 1.5');
    });
  });

  describe('the index follows writes', () => {
    it('finds inserted contacts, the new text after an update, and drops merged ones', async () => {
      const userId = (await createUser(store)).id;
      const [first, second] = await importInOrder(store, userId, [{ name: 'Xylophone Player' }, { name: 'Xylo Twin', tags: ['band'] }]);
      expect(await names('xylo', 10, userId)).toEqual(['Xylophone Player', 'Xylo Twin']);

      await store.contacts.importContacts(userId, [contactRecord({ name: 'Marimba Player', tags: ['orchestra'] }, first!.id)]);
      expect(await names('xylo', 10, userId)).toEqual(['Xylo Twin']);
      expect(await names('marimba', 10, userId)).toEqual(['Marimba Player']);
      expect(await names('orchestra', 10, userId)).toEqual(['Marimba Player']);

      await store.contacts.merge(userId, second!.id, first!.id);
      expect(await names('xylo', 10, userId)).toEqual([]);
      expect(await names('player', 10, userId)).toEqual(['Marimba Player']);
    });
  });
});
