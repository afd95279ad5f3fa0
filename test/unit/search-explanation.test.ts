import { describe, expect, it } from 'vitest';
import { explainSearch } from '../../src/domain/search-explanation.js';
import { searchRank, type SearchableContact } from '../../src/domain/search.js';

const EMPTY: SearchableContact = { name: null, email: null, company: null, title: null, school: null, location: null, tags: null };
const contact = (values: Partial<SearchableContact>): SearchableContact => ({ ...EMPTY, ...values });

const ada = contact({ name: 'Ada Lovelace', email: 'ada@engines.example', company: 'Analytical Engines', tags: ['math', 'Poetry'] });
const adam = contact({ name: 'Adam Smith', email: 'adam@wealth.example', title: 'Economist', location: 'Kirkcaldy' });
const grace = contact({ name: 'Grace Hopper', email: 'grace@navy.example', school: 'Yale', company: 'Ada Systems' });

describe('explainSearch: the fields that matched', () => {
  it('names each field of which a word starts with a word of the query, in field order', () => {
    expect(explainSearch('ada', [ada, adam, grace]).matched).toEqual([['name', 'email'], ['name', 'email'], ['company']]);
    expect(explainSearch('engines math', [ada]).matched).toEqual([['email', 'company', 'tags']]);
    expect(explainSearch('econ kirk', [adam]).matched).toEqual([['title', 'location']]);
    expect(explainSearch('yale', [grace]).matched).toEqual([['school']]);
  });

  it('folds case, accents and punctuation as the search does, and matches only at the start of a word', () => {
    const zoe = contact({ name: 'Zoë Ångström', email: 'z.angstrom@lab.example', tags: ['Físics'] });
    expect(explainSearch('ZOE', [zoe]).matched).toEqual([['name']]);
    expect(explainSearch('angst', [zoe]).matched).toEqual([['name', 'email']]);
    expect(explainSearch('fisi', [zoe]).matched).toEqual([['tags']]);
    expect(explainSearch('ngstrom', [zoe]).matched).toEqual([[]]);
  });

  it('agrees with the ranking: a contact the search finds has every query word in some matched field', () => {
    for (const query of ['ada', 'ada engines', 'smith econ', 'grace yale', 'poetry']) {
      for (const hit of [ada, adam, grace].filter((candidate) => searchRank(query, candidate) !== null)) {
        expect(explainSearch(query, [hit]).matched[0]!.length, `${query}`).toBeGreaterThan(0);
      }
    }
  });
});

describe('explainSearch: an ambiguous query', () => {
  it('is ambiguous when two or more hits match by name equally and best', () => {
    const adaByron = contact({ name: 'Ada Byron', email: 'countess@example.org' });
    expect(explainSearch('ada', [ada, adaByron, grace]).ambiguous).toBe(true);
    // Adam Smith's name starts with "ada" too: a prefix match by name, as good as Ada Lovelace's.
    expect(explainSearch('ada', [ada, adam]).ambiguous).toBe(true);
  });

  it('is not ambiguous when one hit matches its name exactly and the others only start with it', () => {
    const exact = contact({ name: 'Ada' });
    expect(explainSearch('ada', [exact, ada, adam]).ambiguous).toBe(false);
    expect(explainSearch('ada lovelace', [ada]).ambiguous).toBe(false);
  });

  it('is not ambiguous when the matches are by other fields than the name', () => {
    expect(explainSearch('engines', [ada, contact({ name: 'Charles Babbage', company: 'Difference Engines' })]).ambiguous).toBe(false);
    expect(explainSearch('ada', [grace, contact({ name: 'Lin', company: 'Ada Labs' })]).ambiguous).toBe(false);
    expect(explainSearch('ada', []).ambiguous).toBe(false);
  });

  it('compares names as the search folds them', () => {
    expect(explainSearch('jose', [contact({ name: 'José García' }), contact({ name: 'JOSE Luis' })]).ambiguous).toBe(true);
    expect(explainSearch('jose garcia', [contact({ name: 'José García' }), contact({ name: 'José Luis' })]).ambiguous).toBe(false);
  });
});
