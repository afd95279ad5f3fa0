import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { searchMatcher, type SearchRank } from '../../src/domain/search.js';
import {
  lookupWords,
  searchAsync,
  searchSync,
  type AsyncSearchReads,
  type SearchCandidate,
  type SearchReads,
  type SearchScope,
} from '../../src/store/search-plan.js';

const SCOPE_RANK: Record<SearchScope, SearchRank> = { exact: 0, prefix: 1, words: 2 };

/** An owner's listable contacts, already in list order; ids are their positions, zero-padded. */
function network(values: { name?: string | null; email?: string | null; rest?: string | null }[]): SearchCandidate[] {
  return values.map((value, index) => ({ id: String(index).padStart(6, '0'), name: null, email: null, rest: null, ...value }));
}

/**
 * SearchReads over an array, counting what the plan reads. Lookups return the contacts of the scope plus every
 * tenth contact that does not match, since a store's index may return more than matches.
 */
function fakeReads(contacts: SearchCandidate[], query: string) {
  const matcher = searchMatcher(query);
  const cost = { walked: 0, lookups: [] as SearchScope[], looked: 0 };
  const reads: SearchReads<SearchCandidate> = {
    size: () => contacts.length,
    lookup(scope) {
      cost.lookups.push(scope);
      const found = contacts.filter((contact, index) => {
        const rank = matcher.rank(contact);
        return (rank !== null && rank <= SCOPE_RANK[scope]) || index % 10 === 0;
      });
      cost.looked += found.length;
      return found;
    },
    walk(after, count) {
      const start = after === null ? 0 : contacts.findIndex((contact) => contact.id === after.id) + 1;
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

const search = (contacts: SearchCandidate[], query: string, limit: number) => {
  const { reads, cost, matcher } = fakeReads(contacts, query);
  return { ids: searchSync(reads, matcher, limit).map((contact) => contact.id), cost };
};

const FIRST = ['ann', 'anna', 'bob', 'bo', 'carla', 'dan', 'eve', 'zed'];
const LAST = ['smith', 'smithers', 'jones', 'annis', 'boyd', 'zola'];

describe('searchSync', () => {
  it('returns what the ranking rule defines (rank, then list order), for any network, query and limit', () => {
    const contactArbitrary = fc.record({
      name: fc.option(fc.tuple(fc.constantFrom(...FIRST), fc.constantFrom(...LAST)).map((words) => words.join(' ')), { nil: null }),
      email: fc.option(fc.tuple(fc.constantFrom(...FIRST), fc.constantFrom('gmail', 'acme')).map(([first, host]) => `${first}@${host}.com`), { nil: null }),
      rest: fc.option(fc.constantFrom('Acme Labs', 'founder\nfriend', 'Smith & Sons', 'Zurich'), { nil: null }),
    });
    const queryArbitrary = fc.constantFrom('a', 'an', 'ann', 'ann smith', 'smith', 'smi', 'bo', 'gmail', 'labs', 'founder', 'z', 'zed zola', 'nobody', 'ann@gmail.com');
    fc.assert(
      fc.property(fc.array(contactArbitrary, { maxLength: 1500 }), queryArbitrary, fc.integer({ min: 1, max: 50 }), (values, query, limit) => {
        const contacts = network(values);
        expect(search(contacts, query, limit).ids).toEqual(bruteForce(contacts, query, limit));
      }),
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

  it('walks past the first stretch only while that promises to be cheaper than a lookup, and never past 8192', () => {
    // One match in 50: 10 matches cost ~500 contacts of walk, against ~400 rows of lookup at a 20,000-contact network.
    const sparse = network(Array.from({ length: 20_000 }, (_, i) => ({ rest: i % 50 === 7 ? 'founder' : 'friend' })));
    const walked = search(sparse, 'founder', 10);
    expect(walked.ids).toHaveLength(10);
    expect(walked.cost.lookups).toEqual(['exact', 'prefix']);
    expect(walked.cost.walked).toBeLessThan(1_000);
    // Matches only at the end: the walk stops at its limit and the index answers.
    const late = network(Array.from({ length: 40_000 }, (_, i) => ({ rest: i >= 39_000 || i % 100 === 0 ? 'founder' : 'friend' })));
    const clustered = search(late, 'founder', 50);
    expect(clustered.ids).toEqual(bruteForce(late, 'founder', 50));
    expect(clustered.cost.walked).toBeLessThanOrEqual(8192);
  });

  it('ranks exact and prefix matches first, even when they come last in the list', () => {
    const contacts = network([...Array.from({ length: 5_000 }, () => ({ rest: 'Ann Arbor' })), { name: 'Ann Lee' }, { name: 'Ann' }]);
    expect(search(contacts, 'ann', 3).ids).toEqual(['005001', '005000', '000000']);
  });

  it('never loses a match an index lookup misses: it comes with the next rank, in list order', () => {
    const contacts = network([...Array.from({ length: 2_000 }, (_, i) => ({ name: `Person ${i}`, rest: i === 1_500 ? 'ann' : null })), { name: 'Ann' }]);
    const { reads, matcher } = fakeReads(contacts, 'ann');
    const blind: SearchReads<SearchCandidate> = { ...reads, lookup: (scope) => (scope === 'words' ? reads.lookup(scope) : []) };
    expect(searchSync(blind, matcher, 10).map((contact) => contact.id)).toEqual(['001500', '002000']);
  });

  it('reads nothing for a query without words', () => {
    const { ids, cost } = search(network([{ name: '%' }]), '%', 10);
    expect(ids).toEqual([]);
    expect(cost).toEqual({ walked: 0, lookups: [], looked: 0 });
  });
});

describe('searchAsync', () => {
  it('runs the same plan on a store that answers asynchronously', async () => {
    const contacts = network(Array.from({ length: 3_000 }, (_, i) => ({ name: `${FIRST[i % FIRST.length]} ${LAST[i % LAST.length]}` })));
    for (const query of ['a', 'ann smith', 'zola', 'nobody']) {
      const { reads, matcher } = fakeReads(contacts, query);
      const asyncReads: AsyncSearchReads<SearchCandidate> = {
        size: async () => reads.size(),
        lookup: async (scope) => reads.lookup(scope),
        walk: async (after, count) => reads.walk(after, count),
      };
      expect((await searchAsync(asyncReads, matcher, 10)).map((contact) => contact.id), query).toEqual(bruteForce(contacts, query, 10));
    }
  });
});

describe('lookupWords', () => {
  it('narrows by the words of 3 characters or more, or else by the longest', () => {
    expect(lookupWords(['o', 'kon', 'keshaun'])).toEqual(['kon', 'keshaun']);
    expect(lookupWords(['jo', 's'])).toEqual(['jo']);
    expect(lookupWords(['王小'])).toEqual(['王小']);
    expect(lookupWords([])).toEqual([]);
  });
});
