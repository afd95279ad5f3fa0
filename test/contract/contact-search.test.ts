import Database from 'better-sqlite3';
import { keptForLife } from '../../src/store/sqlite/connection.js';
import { StatementCache } from '../../src/store/sqlite/statements.js';
import pg from 'pg';
import { beforeAll, describe, expect, it } from 'vitest';
import type { Contact, ContactValues } from '../../src/domain/contact.js';
import { InputError } from '../../src/domain/errors.js';
import { SEARCH_QUERY_MAX_WORDS, searchRank, searchWords } from '../../src/domain/search.js';
import { SEARCH_CANDIDATE_BUDGET } from '../../src/store/search-plan.js';
import { parseDatabaseUrl } from '../../src/domain/database-url.js';
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
  const all: Contact[] = [];
  for (;;) {
    const page = await store.contacts.listPage(ownerId, { limit: 100, offset: all.length });
    all.push(...page.contacts);
    if (all.length >= page.total) return all;
  }
}

/** Runs one statement on the test database through a connection of its own, as another process would. */
async function plainSql(databaseUrl: string, sql: string, values: unknown[]): Promise<void> {
  const target = parseDatabaseUrl(databaseUrl);
  if (target.kind === 'sqlite') {
    const db = keptForLife(new Database(target.path));
    try {
      StatementCache.of(db)
        .get(sql.replace(/\$\d+/g, '?'))
        .run(...values);
    } finally {
      db.close();
    }
    return;
  }
  const client = new pg.Client({ connectionString: target.url });
  await client.connect();
  try {
    await client.query(sql, values);
  } finally {
    await client.end();
  }
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

  describe('ranking: exact name/email words, then name/email starting with the query, then every query word starting a word; ties in list order', () => {
    it('orders every tier and breaks ties by created_at; the middle of a word matches nothing', async () => {
      expect(await names('ann')).toEqual([
        'Ann', // exact name
        'Annabel Lee', // name prefix (created before Bob Stone)
        'Bob Stone', // email prefix
        'Mary Ann Evans', // a word of the name starts with it
        'Zed Zimmer', // a word of a tag starts with it
        // Not Joanna Planner nor Carla Hill (Hann & Partners): "ann" is only inside their words.
      ]);
    });

    it('agrees with the domain rule searchRank for queries of every length and shape', async () => {
      const queries = [
        'ann',
        'an',
        'a',
        'e',
        'z',
        'er',
        'quasar',
        'QUASAR',
        ' ann ',
        'lee',
        'ann lee',
        'lee ann',
        'mary ev',
        'mary ann e',
        'ex org',
        'example.org',
        '@',
        'y*',
        'x q',
        'émile',
        'zo é',
      ];
      for (const query of queries) {
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
    it('ignores case and Latin accents, for the query and the data alike', async () => {
      expect(await names('ANN')).toEqual(await names('ann'));
      expect(await names('aNn')).toEqual(await names('ann'));
      for (const query of ['émile', 'EMILE', 'emile zola', 'écrivain', 'ecri']) expect(await names(query), query).toEqual(['Émile Zola']);
    });

    it('finds several words in any order and across fields, each starting a word', async () => {
      expect(await names('mary ev')).toEqual(['Mary Ann Evans']);
      expect(await names('evans mary')).toEqual(['Mary Ann Evans']);
      expect(await names('holder quasar univ')).toEqual(['School Holder']);
      expect(await names('quasar zzz')).toEqual([]);
    });

    it('splits emails at their punctuation', async () => {
      expect(await names('x.quasar@example.com')).toEqual(['Email Holder']);
      expect(await names('quasar@exa')).toEqual(['Email Holder']);
      expect(await names('@example')).toEqual(['Bob Stone', 'Email Holder']);
      expect(await names('example.org')).toEqual(['Bob Stone']);
    });

    it('answers one-character queries, best matches first', async () => {
      expect(await names('z')).toEqual(['Zed Zimmer', 'Émile Zola']);
      expect(await names('q', 3)).toEqual(['Quasar Name', 'Email Holder', 'Company Holder']);
    });

    it('looks in name, email, company, title, school, location and tags — and nowhere else', async () => {
      expect(new Set(await names('quasar'))).toEqual(
        new Set(['Quasar Name', 'Email Holder', 'Company Holder', 'Title Holder', 'School Holder', 'Location Holder', 'Tag Holder']),
      );
      expect(await names('conference')).toEqual([]);
    });

    it('matches the words of each tag', async () => {
      expect(await names('anniversary-club')).toEqual(['Zed Zimmer']);
      expect(await names('club')).toEqual(['Zed Zimmer']);
      expect(await names('friend')).toEqual(['Tag Holder']);
      expect(await names('friend quasar')).toEqual(['Tag Holder']);
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

  describe('special characters are text, never syntax nor an error: punctuation only separates words', () => {
    const cases: [string, string[]][] = [
      ['%', []],
      ['_', []],
      ['"', []],
      ['*', []],
      ['\\', []],
      ['_eal', []],
      ['100%', ['100% "Real" Deal_1']],
      ['deal_1', ['100% "Real" Deal_1']],
      ['"real"', ['100% "Real" Deal_1']],
      ['NEAR(', ['NEAR(x) AND y*']],
      ['NEAR(x) AND y*', ['NEAR(x) AND y*']],
      ["O'Brien \\", ['NEAR(x) AND y*']],
    ];
    for (const [query, expected] of cases) {
      it(`${JSON.stringify(query)} finds ${expected.length === 0 ? 'nothing' : 'the words it holds'}`, async () => {
        expect(await names(query)).toEqual(expected);
      });
    }

    it('FTS and LIKE syntax neither fails nor acts as an operator', async () => {
      for (const query of [
        'ann*',
        '"ann"',
        'ann OR bob',
        'NOT ann',
        '^ann',
        'name:ann',
        '{name}: ann',
        '(',
        ')',
        'AND',
        'OR',
        '-ann',
        'ann NEAR(bob)',
        '[a-z]',
        "'; DROP TABLE contacts; --",
      ]) {
        const found = await store.contacts.search(ownerId, query, 50);
        expect(
          found.map((contact) => contact.id),
          query,
        ).toEqual(rankedIds(owned, query, 50));
      }
      // OR is a word like any other: here it starts "org" of Bob Stone's email, as ann and bob start two more.
      expect(await names('ann OR bob')).toEqual(['Bob Stone']);
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

    it('indexes values of any length, words of thousands of characters included', async () => {
      const userId = (await createUser(store)).id;
      const long = 'é'.repeat(3_000);
      await importInOrder(store, userId, [
        { name: `Long ${long}`, email: `${'x'.repeat(5_000)}@example.com`, company: 'word '.repeat(13_000) },
      ]);
      expect(await names('long', 10, userId)).toEqual([`Long ${long}`]);
      expect(await names(`long ${'e'.repeat(150)}`, 10, userId)).toEqual([`Long ${long}`]);
      expect(await names('xxxx', 10, userId)).toEqual([`Long ${long}`]);
      expect(await names('word', 10, userId)).toEqual([`Long ${long}`]);
    });

    it('follows plain SQL from another connection too: the database maintains the index itself', async () => {
      const userId = (await createUser(store)).id;
      const [contact] = await importInOrder(store, userId, [{ name: 'Ocarina Player' }]);
      await plainSql(db().databaseUrl, 'UPDATE contacts SET name = $1, tags = $2 WHERE id = $3', [
        'Theremin Player',
        db().backend === 'sqlite' ? '["Électronique"]' : ['Électronique'],
        contact!.id,
      ]);
      expect(await names('ocarina', 10, userId)).toEqual([]);
      expect(await names('theremin electro', 10, userId)).toEqual(['Theremin Player']);
      await plainSql(db().databaseUrl, 'DELETE FROM contacts WHERE id = $1', [contact!.id]);
      expect(await names('theremin', 10, userId)).toEqual([]);
    });
  });
});

/**
 * A network well past the walk's first stretch, so that every way the search plan reads runs: walks for common
 * matches, index lookups for rare ones, exact matches that come last. Another owner's contacts interleave in time
 * and share the words; duplicates merged away and the self contact match too. Results must be the rule's, always.
 */
describeEachBackend('ContactStore.search on a larger network', (db) => {
  const FIRST = ['Ann', 'Anna', 'Bob', 'Carla', 'Émile', 'Zoë', 'Jo', 'Ming'];
  const LAST = ['Lee', 'Smith', 'Nguyễn', 'Ó Briain', 'Zola', 'Stone'];
  const TAGS = ['founder', 'friend', 'investor', 'anniversary-club'];
  let store: Store;
  let ownerId: string;
  let otherId: string;
  let owned: Contact[];

  const contactAt = (index: number): Partial<ContactValues> => {
    const first = FIRST[index % FIRST.length]!;
    const last = LAST[Math.floor(index / FIRST.length) % LAST.length]!;
    return {
      name: `${first} ${last}`,
      email: `${first}.${index}@${index % 2 === 0 ? 'gmail.com' : 'acme.io'}`.toLowerCase(),
      company: index % 300 === 150 ? 'Quokka Labs' : `Firm ${index % 40}`,
      tags: [TAGS[index % TAGS.length]!, ...(index % 7 === 0 ? [TAGS[(index + 1) % TAGS.length]!] : [])],
    };
  };

  beforeAll(async () => {
    store = db().store;
    ownerId = (await createUser(store, 'pro', 'Ann Quokka')).id;
    otherId = (await createUser(store, 'pro', 'Other Owner')).id;
    await importInOrder(
      store,
      otherId,
      [...Array.from({ length: 400 }, (_, i) => contactAt(i * 3)), { name: 'Ann' }, { name: 'Quokka Rare' }],
      0,
    );
    const values = [
      ...Array.from({ length: 1_400 }, (_, i) => contactAt(i)),
      { name: 'Ann Lee Quokka' },
      { name: '🎸 Wombat Band' },
      { name: 'Ann' },
      { name: 'Ann Duplicate' },
    ];
    owned = await importInOrder(store, ownerId, values, 1);
    const duplicate = owned.find((contact) => contact.name === 'Ann Duplicate')!;
    await store.contacts.merge(ownerId, duplicate.id, owned[0]!.id);
    owned = await listAll(store, ownerId);
  });

  it('agrees with the domain rule for common, rare, exact, multi-word and empty-handed queries, at every limit', async () => {
    const queries = [
      'a',
      'z',
      'q',
      'an',
      'ann',
      'ann l',
      'ann lee',
      'anna smith',
      'quo',
      'quokka',
      'quokka labs',
      'gmail',
      'acme.io',
      'founder',
      'anniversary',
      'lee',
      'emile',
      'zoe',
      'nguyen',
      'o briain',
      'firm 3',
      'firm 39',
      'jo',
      'ming st',
      'wombat',
      'wombat band',
      'nobody',
      'ann zzz',
    ];
    for (const query of queries) {
      for (const limit of [1, 10, 50]) {
        const found = (await store.contacts.search(ownerId, query, limit)).map((contact) => contact.id);
        expect(found, `${query} (limit ${limit})`).toEqual(rankedIds(owned, query, limit));
      }
    }
  });

  it('never returns another owner’s contacts, a merged duplicate or the self contact', async () => {
    const ownedIds = new Set(owned.map((contact) => contact.id));
    for (const query of ['ann', 'quokka', 'quokka rare', 'duplicate', 'other owner', 'a']) {
      for (const contact of await store.contacts.search(ownerId, query, 50)) expect(ownedIds.has(contact.id), query).toBe(true);
    }
    expect(await store.contacts.search(ownerId, 'quokka rare', 50)).toEqual([]);
    expect(await store.contacts.search(ownerId, 'duplicate', 50)).toEqual([]);
    expect((await store.contacts.search(otherId, 'ann', 1)).map((contact) => contact.name)).toEqual(['Ann']);
  });
});

/**
 * Names, emails, companies and tags mixing scripts, accents, case pairs, ligatures, punctuation and symbols, on a
 * network past the walk's first stretch: whatever each database's index takes for a letter, every search must
 * return what the domain rule defines, through walks and index lookups alike.
 */
describeEachBackend('ContactStore.search across scripts and symbols', (db) => {
  const WORDS = [
    'José',
    'JOSÉ',
    'Jose\u0301',
    'Łukasz',
    'Ærøskøbing',
    'Straße',
    'STRASSE',
    'Ñandú',
    'Çelik',
    'Şahin',
    'İstanbul',
    'Øyvind',
    'Nguyễn',
    'Đặng',
    'Σωκράτης',
    'ΣΩΚΡΑΤΗΣ',
    'Άννα',
    'αννα',
    'Дмитрий',
    'Йорк',
    'ёлка',
    'Ёлка',
    '王小明',
    '李',
    'さくら',
    'サクラ',
    '김민준',
    'محمد',
    'דוד',
    'हिन्दी',
    'ไทย',
    'O’Brien',
    "O'Neil",
    'Jean-Luc',
    'x.y@gmail.com',
    'A&B',
    '100%',
    'C++',
    '🎸Rock',
    '⭐ Star',
    'Zoë',
    'ǅemal',
    'ﬁnance',
    'Ⓐnna',
    '🅰lpha',
    'K',
    'Ω',
  ];
  let store: Store;
  let ownerId: string;
  let owned: Contact[];

  beforeAll(async () => {
    store = db().store;
    ownerId = (await createUser(store)).id;
    let seed = 7;
    const next = () => (seed = (seed * 1_103_515_245 + 12_345) % 2_147_483_648) / 2_147_483_648;
    const words = () => Array.from({ length: 1 + Math.floor(next() * 3) }, () => WORDS[Math.floor(next() * WORDS.length)]!);
    const separators = [' ', '-', ', ', '.', ' · ', '/'];
    const text = () => words().join(separators[Math.floor(next() * separators.length)]!);
    owned = await importInOrder(
      store,
      ownerId,
      Array.from({ length: 700 }, () => ({
        name: text(),
        email: next() < 0.5 ? null : `${words().join('.')}@mail.test`,
        company: next() < 0.5 ? text() : null,
        tags: next() < 0.3 ? [text()] : null,
      })),
    );
  });

  it('agrees with the domain rule for every word and every prefix of it', async () => {
    const queries = new Set(WORDS);
    for (const word of WORDS) {
      for (const folded of searchWords(word)) {
        const characters = [...folded];
        for (let length = 1; length <= characters.length; length += 1) queries.add(characters.slice(0, length).join(''));
      }
    }
    for (const query of queries) {
      const found = (await store.contacts.search(ownerId, query, 50)).map((contact) => contact.id);
      expect(found, query).toEqual(rankedIds(owned, query, 50));
    }
  });
});

/**
 * A network past the candidate budget, whose names start with every letter: one-letter words match nearly every
 * contact and rare combinations of them are what no index narrows. Whatever the query, a search reads at most
 * SEARCH_CANDIDATE_BUDGET contacts; what it returns must still be matches, best first, exact ones before all.
 */
describeEachBackend('ContactStore.search past the candidate budget', (db) => {
  const FIRST = [
    'Ann',
    'Bob',
    'Carla',
    'Dmitri',
    'Eve',
    'Farah',
    'Gus',
    'Hana',
    'Ivo',
    'Jo',
    'Kim',
    'Lee',
    'Ming',
    'Nia',
    'Otto',
    'Pia',
    'Quinn',
    'Rosa',
    'Sam',
    'Tess',
    'Uma',
    'Vic',
    'Wes',
    'Xena',
    'Yuri',
    'Zoë',
  ];
  const LAST = ['Abbott', 'Baker', 'Chen', 'Diaz', 'Ekwueme', 'Fox', 'Garcia', 'Ito', 'Moreau', 'Novak', 'Okafor', 'Smith'];
  const SIZE = SEARCH_CANDIDATE_BUDGET + 1_500;
  // Within the walk's first stretch, within the budget, and past it.
  const NINES = [100, 1_500, SIZE - 100];
  const EXACT = ['A', 'X Y Z', 'Ma 0', 'E E E E'];
  let store: Store;
  let ownerId: string;
  let owned: Contact[];
  const byName = (name: string) => owned.find((contact) => contact.name === name)!;

  beforeAll(async () => {
    store = db().store;
    ownerId = (await createUser(store)).id;
    const values = Array.from({ length: SIZE }, (_, i): Partial<ContactValues> => {
      const first = FIRST[i % FIRST.length]!;
      const last = LAST[Math.floor(i / FIRST.length) % LAST.length]!;
      return {
        name: `${first} ${last}`,
        email: `${first}.${last}@gmail.com`.toLowerCase(),
        // Digits are rare: a zebra now and then, and a few nines.
        company: i % 997 === 0 ? `Zebra ${i}` : NINES.includes(i) ? '9 Lives' : `${last} Labs`,
        tags: [i % 2 === 0 ? 'friend' : 'founder'],
      };
    });
    owned = await importInOrder(store, ownerId, [...values, ...EXACT.map((name) => ({ name }))]);
  });

  const ADVERSARIAL = [
    ...'abcdefghijklmnopqrstuvwxyz',
    '0',
    '9',
    'a 0',
    'x y z',
    'a b c d e f g h i j',
    'e e e e',
    'ma 0',
    'an ab ac',
    'gmail x',
    'gmail 9',
    'zebra a',
    'fr f',
  ];

  it('returns only matches, best rank first, ties in list order, for every adversarial query and limit', async () => {
    const position = new Map(owned.map((contact, index) => [contact.id, index]));
    for (const query of ADVERSARIAL) {
      for (const limit of [10, 50]) {
        const found = await store.contacts.search(ownerId, query, limit);
        const ranked = found.map((contact) => ({ rank: searchRank(query, contact), at: position.get(contact.id) }));
        expect(
          ranked.every((entry) => entry.rank !== null && entry.at !== undefined),
          `${query} (limit ${limit})`,
        ).toBe(true);
        const sorted = [...ranked].sort((a, b) => a.rank! - b.rank! || a.at! - b.at!);
        expect(ranked, `${query} (limit ${limit})`).toEqual(sorted);
        expect(found.length, `${query} (limit ${limit})`).toBeLessThanOrEqual(limit);
      }
    }
  });

  it('returns exact matches first, though they come last in the list', async () => {
    for (const [query, name] of [
      ['a', 'A'],
      ['x y z', 'X Y Z'],
      ['ma 0', 'Ma 0'],
      ['e e e e', 'E E E E'],
    ] as const) {
      expect((await store.contacts.search(ownerId, query, 10))[0]?.id, query).toBe(byName(name).id);
    }
  });

  it('finds what the walk shows is rare in full, however short the other words', async () => {
    for (const query of ['zebra a', 'zebra', '9 lives', 'quinn', 'ann abbott', 'founder', 'z']) {
      for (const limit of [10, 50]) {
        const found = (await store.contacts.search(ownerId, query, limit)).map((contact) => contact.id);
        expect(found, `${query} (limit ${limit})`).toEqual(rankedIds(owned, query, limit));
      }
    }
  });

  it('past the budget, answers with the best of the contacts it read: "gmail 9" finds the nines before it, not the one after', async () => {
    const [first, second, late] = NINES.map((index) => owned[index]!.id);
    expect(rankedIds(owned, 'gmail 9', 10)).toEqual([first, owned[997]!.id, second, late]);
    expect((await store.contacts.search(ownerId, 'gmail 9', 10)).map((contact) => contact.id)).toEqual([first, owned[997]!.id, second]);
  });

  it(`refuses a query of more than ${SEARCH_QUERY_MAX_WORDS} words`, async () => {
    await expect(store.contacts.search(ownerId, 'a b c d e f g h i j k', 10)).rejects.toThrow(
      new InputError('"query" must have at most 10 words; got 11'),
    );
  });
});
