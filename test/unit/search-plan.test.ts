import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { searchMatcher, searchWords, type SearchRank } from '../../src/domain/search.js';
import {
  indexedLength,
  lookupWords,
  RARE_QUERY_BUDGET,
  SEARCH_CANDIDATE_BUDGET,
  searchAsync,
  searchSync,
  type AsyncSearchReads,
  type SearchCandidate,
  type SearchReads,
  type SearchScope,
  type WalkPosition,
} from '../../src/store/search-plan.js';

const SCOPE_RANK: Record<SearchScope, SearchRank> = { exact: 0, prefix: 1, words: 2 };

/** An owner's listable contacts, already in list order; ids are their positions, zero-padded. */
function network(values: { name?: string | null; email?: string | null; rest?: string | null }[]): SearchCandidate[] {
  return values.map((value, index) => ({ id: String(index).padStart(6, '0'), name: null, email: null, rest: null, ...value }));
}

/**
 * SearchReads over an array, counting what the plan reads. Lookups return the contacts of the scope plus every
 * thousandth contact that does not match, since a store's index may return more than matches; past `max`, the index
 * yields the newest first, the order least like the list's.
 */
function fakeReads(contacts: SearchCandidate[], query: string, { sendOnlyMatches = false } = {}) {
  const matcher = searchMatcher(query);
  const cost = { walked: 0, lookups: [] as SearchScope[], looked: 0 };
  const positions = new Map(contacts.map((contact, index) => [contact.id, index]));
  const startAfter = (after: WalkPosition | null) => (after === null ? 0 : positions.get(after.id)! + 1);
  const reads: SearchReads<SearchCandidate> = {
    size: () => contacts.length,
    lookup(scope, after, max) {
      cost.lookups.push(scope);
      const found: SearchCandidate[] = [];
      for (let index = contacts.length - 1; index >= startAfter(after) && found.length < max; index -= 1) {
        const rank = matcher.rank(contacts[index]!);
        if ((rank !== null && rank <= SCOPE_RANK[scope]) || index % 1000 === 0) found.push(contacts[index]!);
      }
      cost.looked += found.length;
      // As PostgreSQL does: it checks every word of the query before sending, and says how many it read.
      const sent = sendOnlyMatches ? found.filter((contact) => matcher.rank(contact) !== null) : found;
      return { rows: sent.reverse(), looked: found.length };
    },
    walk(after, count) {
      const start = startAfter(after);
      const rows = contacts.slice(start, start + count);
      cost.walked += rows.length;
      const last = rows.at(-1);
      return { rows, walked: rows.length, last: last ? { created_at: '', id: last.id } : null };
    },
  };
  return { reads, cost, matcher };
}

/** The result the ranking rule defines: rank, then list order. */
function bruteForce(contacts: SearchCandidate[], query: string, limit: number): string[] {
  const matcher = searchMatcher(query);
  return contacts
    .map((contact) => ({ id: contact.id, rank: matcher.rank(contact) }))
    .filter((entry) => entry.rank !== null)
    .sort((a, b) => a.rank! - b.rank! || a.id.localeCompare(b.id))
    .slice(0, limit)
    .map((entry) => entry.id);
}

const search = (contacts: SearchCandidate[], query: string, limit: number, options?: { sendOnlyMatches: boolean }) => {
  const { reads, cost, matcher } = fakeReads(contacts, query, options);
  return { ids: searchSync(reads, matcher, limit).map((contact) => contact.id), cost };
};

const FIRST = ['ann', 'anna', 'bob', 'bo', 'carla', 'dan', 'eve', 'zed'];
const LAST = ['smith', 'smithers', 'jones', 'annis', 'boyd', 'zola'];

describe('searchSync', () => {
  it('returns what the ranking rule defines (rank, then list order), for any network, query and limit', () => {
    const contactArbitrary = fc.record({
      name: fc.option(
        fc.tuple(fc.constantFrom(...FIRST), fc.constantFrom(...LAST)).map((words) => words.join(' ')),
        { nil: null },
      ),
      email: fc.option(
        fc.tuple(fc.constantFrom(...FIRST), fc.constantFrom('gmail', 'acme')).map(([first, host]) => `${first}@${host}.com`),
        { nil: null },
      ),
      rest: fc.option(fc.constantFrom('Acme Labs', 'founder\nfriend', 'Smith & Sons', 'Zurich'), { nil: null }),
    });
    const queryArbitrary = fc.constantFrom(
      'a',
      'an',
      'ann',
      'ann smith',
      'smith',
      'smi',
      'bo',
      'gmail',
      'labs',
      'founder',
      'z',
      'zed zola',
      'nobody',
      'ann@gmail.com',
    );
    fc.assert(
      fc.property(
        fc.array(contactArbitrary, { maxLength: 1500 }),
        queryArbitrary,
        fc.integer({ min: 1, max: 50 }),
        (values, query, limit) => {
          const contacts = network(values);
          expect(search(contacts, query, limit).ids).toEqual(bruteForce(contacts, query, limit));
        },
      ),
      { numRuns: 150 },
    );
  });

  it('finds common matches by walking the list, without any lookup past the exact one', () => {
    const contacts = network(Array.from({ length: 20_000 }, (_, i) => ({ name: `Person ${i}`, email: `p${i}@gmail.com` })));
    const { ids, cost } = search(contacts, 'gmail', 10);
    expect(ids).toEqual(contacts.slice(0, 10).map((contact) => contact.id));
    expect(cost.lookups).toEqual(['exact', 'prefix']);
    expect(cost.walked).toBe(256);
  });

  it('finds rare matches by index lookup after one short stretch of walk', () => {
    const contacts = network(Array.from({ length: 20_000 }, (_, i) => ({ name: i % 4000 === 3999 ? `Rare ${i}` : `Person ${i}` })));
    const { ids, cost } = search(contacts, 'rare', 10);
    expect(ids).toEqual(['003999', '007999', '011999', '015999', '019999']);
    expect(cost.lookups).toEqual(['exact', 'prefix', 'words']);
    expect(cost.walked).toBe(256);
  });

  it('walks past the first stretch only while that promises to be cheaper than a lookup', () => {
    // One match in 50: 10 matches cost ~500 contacts of walk, against ~400 rows of lookup at a 20,000-contact network.
    const sparse = network(Array.from({ length: 20_000 }, (_, i) => ({ rest: i % 50 === 7 ? 'founder' : 'friend' })));
    const walked = search(sparse, 'founder', 10);
    expect(walked.ids).toHaveLength(10);
    expect(walked.cost.lookups).toEqual(['exact', 'prefix']);
    expect(walked.cost.walked).toBeLessThan(1_000);
    // One match in 100, and a cluster at the end: walking to 50 matches would not fit in the budget; the index answers.
    const late = network(Array.from({ length: 40_000 }, (_, i) => ({ rest: i >= 39_500 || i % 100 === 0 ? 'founder' : 'friend' })));
    const clustered = search(late, 'founder', 50);
    expect(clustered.ids).toEqual(bruteForce(late, 'founder', 50));
    expect(clustered.cost.lookups).toEqual(['exact', 'prefix', 'words']);
    expect(clustered.cost.walked + clustered.cost.looked).toBeLessThanOrEqual(SEARCH_CANDIDATE_BUDGET);
  });

  it('ranks exact and prefix matches first, even when they come last in the list', () => {
    const contacts = network([...Array.from({ length: 5_000 }, () => ({ rest: 'Ann Arbor' })), { name: 'Ann Lee' }, { name: 'Ann' }]);
    expect(search(contacts, 'ann', 3).ids).toEqual(['005001', '005000', '000000']);
  });

  it('never loses a match an index lookup misses: it comes with the next rank, in list order', () => {
    const contacts = network([
      ...Array.from({ length: 2_000 }, (_, i) => ({ name: `Person ${i}`, rest: i === 1_500 ? 'ann' : null })),
      { name: 'Ann' },
    ]);
    const { reads, matcher } = fakeReads(contacts, 'ann');
    const blind: SearchReads<SearchCandidate> = {
      ...reads,
      lookup: (scope, after, max) => (scope === 'words' ? reads.lookup(scope, after, max) : { rows: [], looked: 0 }),
    };
    expect(searchSync(blind, matcher, 10).map((contact) => contact.id)).toEqual(['001500', '002000']);
  });

  it('reads nothing for a query without words', () => {
    const { ids, cost } = search(network([{ name: '%' }]), '%', 10);
    expect(ids).toEqual([]);
    expect(cost).toEqual({ walked: 0, lookups: [], looked: 0 });
  });
});

/**
 * 12,000 contacts whose words start with most letters, as real names do, so that one-letter words match nearly all of
 * them; digits and the word "zebra" are rare, and every contact has a gmail address.
 */
function wideNetwork(): SearchCandidate[] {
  return network(
    Array.from({ length: 12_000 }, (_, i) => ({
      name: `${FIRST[i % FIRST.length]} ${LAST[Math.floor(i / FIRST.length) % LAST.length]}`,
      email: `${FIRST[i % FIRST.length]}${i}@gmail.com`,
      rest: `${['Acme', 'Hooli', 'Initech', 'Umbrella', 'Vandelay', 'Wonka', 'Globex', 'Kwik', 'Pied Piper', 'Tyrell', 'Yoyodyne', 'Massive', 'Nakatomi', 'Oscorp', 'Quartz', 'Rekall', 'Soylent', 'Xanadu', 'Jupiter', 'Falcon'][i % 20]} ${i % 997 === 0 ? `zebra ${i}` : 'labs'}`,
    })),
  );
}

const ADVERSARIAL_QUERIES = [
  ...'abcdefghijklmnopqrstuvwxyz0',
  'a 0',
  'x y z',
  'a b c d e f g h i j',
  'e e e e',
  'ma 0',
  'an ab ac',
  'gmail x',
  'gmail 0',
  'zebra a',
  'labs 9',
];

describe('the candidate budget', () => {
  const contacts = wideNetwork();

  it(`never hands the plan more than ${SEARCH_CANDIDATE_BUDGET} contacts, walked and looked up together, whatever the query`, () => {
    for (const query of ADVERSARIAL_QUERIES) {
      for (const limit of [1, 10, 50]) {
        for (const sendOnlyMatches of [false, true]) {
          const { cost } = search(contacts, query, limit, { sendOnlyMatches });
          expect(cost.walked + cost.looked, `${query} (limit ${limit})`).toBeLessThanOrEqual(SEARCH_CANDIDATE_BUDGET);
        }
      }
    }
  });

  it('past the budget, answers with the best it read: every one a match, best rank first, ties in list order', () => {
    for (const query of ADVERSARIAL_QUERIES) {
      const matcher = searchMatcher(query);
      const ranked = search(contacts, query, 50).ids.map((id) => ({ id, rank: matcher.rank(contacts[Number(id)]!) }));
      expect(
        ranked.every((entry) => entry.rank !== null),
        query,
      ).toBe(true);
      const sorted = [...ranked].sort((a, b) => a.rank! - b.rank! || a.id.localeCompare(b.id));
      expect(ranked, query).toEqual(sorted);
    }
  });

  it('still finds exact matches first, wherever they are in the list', () => {
    const withExact = [
      ...contacts,
      ...network([{ name: 'A' }, { name: 'X Y Z' }, { email: 'ma.0@example.com' }]).map((contact, i) => ({
        ...contact,
        id: String(12_000 + i).padStart(6, '0'),
      })),
    ];
    expect(search(withExact, 'a', 10).ids[0]).toBe('012000');
    expect(search(withExact, 'x y z', 10).ids[0]).toBe('012001');
    expect(search(withExact, 'ma 0 example com', 10).ids).toEqual(['012002']);
  });

  it('never narrows a lookup by a one-letter word: such queries find their word matches by walking', () => {
    for (const query of ['a 0', 'x y z', 'a b c d e f g h i j', '0']) {
      const { cost } = search(contacts, query, 10);
      expect(cost.lookups, query).not.toContain('words');
    }
  });

  // Everyone has a gmail address; "n" starts only the word "nine", at the positions given.
  const gmailNetwork = (nines: number[]) =>
    network(Array.from({ length: 20_000 }, (_, i) => ({ email: `p${i}@gmail.com`, rest: nines.includes(i) ? 'nine' : 'ten' })));

  it('makes no lookup that the walk shows would not fit: "gmail n" walks to the budget, and finds what it passes', () => {
    const { ids, cost } = search(gmailNetwork([100, 1_500, 15_000]), 'gmail n', 10);
    expect(cost.lookups).toEqual(['exact', 'prefix']);
    expect(cost.walked + cost.looked).toBe(SEARCH_CANDIDATE_BUDGET);
    expect(ids).toEqual(['000100', '001500']);
  });

  it(`reads at most ${RARE_QUERY_BUDGET} contacts when the walk has met no match at all by the word rank`, () => {
    const { ids, cost } = search(gmailNetwork([1_500, 15_000]), 'gmail n', 10);
    expect(cost.walked + cost.looked).toBe(RARE_QUERY_BUDGET);
    expect(ids).toEqual([]);
    for (const query of ['x y z', '0', 'gmail q', 'te 0']) {
      const rare = search(gmailNetwork([]), query, 10);
      expect(rare.ids, query).toEqual([]);
      expect(rare.cost.walked + rare.cost.looked, query).toBe(RARE_QUERY_BUDGET);
    }
  });

  it('walks rather than read past the budget what a lookup narrowed by fewer words than the query has returns', () => {
    // One contact in 25 has a word starting with "ab", none one starting with "cd": a lookup by "ab" would read ~800.
    const contacts = network(Array.from({ length: 20_000 }, (_, i) => ({ rest: i % 25 === 0 ? 'abba' : 'other' })));
    const { ids, cost } = search(contacts, 'ab cd', 10);
    expect(ids).toEqual([]);
    expect(cost.lookups).toEqual(['exact', 'prefix']);
    expect(cost.walked + cost.looked).toBe(RARE_QUERY_BUDGET);
  });

  it('looks up when neither the walk nor the lookup fits: the index picks matches, so more come back for the budget', () => {
    // One match in 45 of 100,000: 50 matches cost 2,250 contacts of walk, or a lookup of 2,222, cut to the budget.
    const contacts = network(Array.from({ length: 100_000 }, (_, i) => ({ name: i % 45 === 0 ? `Ivy ${i}` : `Person ${i}` })));
    const { ids, cost } = search(contacts, 'ivy', 50);
    expect(cost.lookups).toEqual(['exact', 'prefix']);
    expect(cost.walked).toBe(256);
    expect(cost.walked + cost.looked).toBeLessThanOrEqual(SEARCH_CANDIDATE_BUDGET);
    expect(ids).toHaveLength(50);
    expect(Math.floor(SEARCH_CANDIDATE_BUDGET / 45)).toBeLessThan(50);
  });

  it('looks up what the walk shows is rare, however short the other words: "zebra a" finds every zebra', () => {
    const { ids, cost } = search(contacts, 'zebra a', 50);
    expect(cost.lookups).toEqual(['exact', 'prefix', 'words']);
    expect(ids).toEqual(bruteForce(contacts, 'zebra a', 50));
  });
});

describe('searchAsync', () => {
  it('runs the same plan on a store that answers asynchronously', async () => {
    const contacts = network(Array.from({ length: 3_000 }, (_, i) => ({ name: `${FIRST[i % FIRST.length]} ${LAST[i % LAST.length]}` })));
    for (const query of ['a', 'ann smith', 'zola', 'nobody']) {
      const { reads, matcher } = fakeReads(contacts, query);
      const asyncReads: AsyncSearchReads<SearchCandidate> = {
        size: async () => reads.size(),
        lookup: async (scope, after, max) => reads.lookup(scope, after, max),
        walk: async (after, count) => reads.walk(after, count),
      };
      expect(
        (await searchAsync(asyncReads, matcher, 10)).map((contact) => contact.id),
        query,
      ).toEqual(bruteForce(contacts, query, 10));
    }
  });
});

describe('lookupWords', () => {
  it('narrows by the words of 3 characters or more, or else by the longest if it has 2, each once', () => {
    expect(lookupWords(['o', 'kon', 'keshaun'])).toEqual(['kon', 'keshaun']);
    expect(lookupWords(['jo', 's'])).toEqual(['jo']);
    expect(lookupWords(['王小'])).toEqual(['王小']);
    expect(lookupWords(['ann', 'lee', 'ann'])).toEqual(['ann', 'lee']);
    expect(lookupWords([])).toEqual([]);
  });

  it('never narrows by a one-letter word', () => {
    expect(lookupWords(['a', '0'])).toEqual([]);
    expect(lookupWords(['x', 'y', 'z'])).toEqual([]);
    expect(lookupWords(['李'])).toEqual([]);
  });

  it('counts a word as the index does, so combining marks never lengthen a one-letter word', () => {
    // The words searchWords makes of `\u0301a \u0301e \u0301s`: FTS5 drops the marks and sees `a`, `e`, `s`.
    expect(lookupWords(searchWords('\u0301a \u0301e \u0301s \u0301m \u0301c'))).toEqual([]);
    expect(lookupWords(['\u0301\u0301a', '\u0301'])).toEqual([]);
    // A mark FTS5 splits at leaves one letter on one side: `क` then `a`.
    expect(lookupWords(['क\u093fa', 'x'])).toEqual([]);
    expect(lookupWords(['\u0301ab', 'c'])).toEqual(['\u0301ab']);
    expect(lookupWords(['\u0301abc', 'de'])).toEqual(['\u0301abc']);
  });
});

describe('indexedLength', () => {
  it('is the length of the shortest run between marks, a precomposed letter counting one', () => {
    expect(indexedLength('abc')).toBe(3);
    expect(indexedLength('\u0301a')).toBe(1);
    expect(indexedLength('\u0301\u20dd\u0301')).toBe(0);
    expect(indexedLength('अमित')).toBe(1);
    expect(indexedLength('ab\u0903cde')).toBe(2);
    expect(indexedLength('김')).toBe(1);
    expect(indexedLength('и\u0306ka')).toBe(3);
  });
});
