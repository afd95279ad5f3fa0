import { describe, expect, it } from 'vitest';
import { InputError } from '../../src/domain/errors.js';
import {
  parseSearchRequest,
  SEARCH_LIMIT_DEFAULT,
  SEARCH_LIMIT_MAX,
  SEARCH_LIMIT_MIN,
  SEARCH_QUERY_MAX_LENGTH,
  SEARCH_QUERY_MAX_WORDS,
  SearchRank,
  searchMatcher,
  searchRank,
  searchText,
  searchWords,
  type SearchableContact,
} from '../../src/domain/search.js';

const EMPTY: SearchableContact = { name: null, email: null, company: null, title: null, school: null, location: null, tags: null };
const contact = (values: Partial<SearchableContact>): SearchableContact => ({ ...EMPTY, ...values });

describe('parseSearchRequest', () => {
  const refused = (input: { query: unknown; limit?: unknown }, message: string) =>
    expect(() => parseSearchRequest(input)).toThrow(new InputError(message));

  it('trims the query and defaults the limit to 10', () => {
    expect(SEARCH_LIMIT_DEFAULT).toBe(10);
    expect(parseSearchRequest({ query: '  Ada  ' })).toEqual({ query: 'Ada', limit: 10 });
    expect(parseSearchRequest({ query: 'Ada', limit: undefined })).toEqual({ query: 'Ada', limit: 10 });
  });

  it('takes 1 to 200 characters, counting characters rather than UTF-16 units', () => {
    expect(SEARCH_QUERY_MAX_LENGTH).toBe(200);
    expect(parseSearchRequest({ query: 'x' }).query).toBe('x');
    expect(parseSearchRequest({ query: 'x'.repeat(200) }).query).toHaveLength(200);
    expect(parseSearchRequest({ query: '😀'.repeat(200) }).query).toHaveLength(400);
    refused({ query: 'x'.repeat(201) }, '"query" must be at most 200 characters; got 201');
  });

  it('takes at most 10 words, counted as searchWords splits them', () => {
    expect(SEARCH_QUERY_MAX_WORDS).toBe(10);
    expect(parseSearchRequest({ query: 'a b c d e f g h i j' }).query).toBe('a b c d e f g h i j');
    expect(parseSearchRequest({ query: 'jean-luc.picard+work@mail.starfleet.example.org' }).query).toContain('picard');
    expect(parseSearchRequest({ query: '%% a ** b ""' }).query).toBe('%% a ** b ""');
    refused({ query: 'a b c d e f g h i j k' }, '"query" must have at most 10 words; got 11');
    refused({ query: 'a.b.c.d.e.f.g.h.i.j.k.l' }, '"query" must have at most 10 words; got 12');
    refused({ query: '0 '.repeat(100) }, '"query" must have at most 10 words; got 100');
  });

  it('refuses a query that is empty once trimmed, not a string, or holds control characters (NUL included)', () => {
    refused({ query: '' }, '"query" must not be empty');
    refused({ query: ' \t\n' }, '"query" must not be empty');
    refused({ query: 42 }, '"query" must be a string');
    refused({ query: null }, '"query" must be a string');
    refused({ query: 'a\u0000b' }, '"query" must not contain control characters');
    refused({ query: 'a\u001fb' }, '"query" must not contain control characters');
    refused({ query: 'a\nb' }, '"query" must not contain control characters');
  });

  it('takes a limit from 1 to 50', () => {
    expect([SEARCH_LIMIT_MIN, SEARCH_LIMIT_MAX]).toEqual([1, 50]);
    expect(parseSearchRequest({ query: 'a', limit: 1 }).limit).toBe(1);
    expect(parseSearchRequest({ query: 'a', limit: 50 }).limit).toBe(50);
    for (const limit of [0, 51, -1, 1.5, Number.NaN, '5', null]) {
      refused({ query: 'a', limit }, `"limit" must be an integer from 1 to 50; got ${String(limit)}`);
    }
  });
});

describe('searchWords', () => {
  it('folds case, Latin accents and Unicode normalization, code point by code point', () => {
    expect(searchWords('ÉMILE Zola')).toEqual(['emile', 'zola']);
    expect(searchWords('Ångström Ñandú Ærø Œuvre')).toEqual(['angstrom', 'nandu', 'ærø', 'œuvre']);
    expect(searchWords('Jose\u0301 Nguyễn')).toEqual(['jose', 'nguyen']);
    expect(searchWords('İstanbul')).toEqual(['istanbul']);
    // Final sigma is not special-cased: every Σ lower-cases alike, as in the databases.
    expect(searchWords('ΟΔΟΣ')).toEqual(['οδοσ']);
  });

  it('keeps the marks of other scripts: й is not и', () => {
    expect(searchWords('Йорк Ёлка')).toEqual(['йорк', 'ёлка']);
    expect(searchWords('हिन्दी')).toEqual(['हिन्दी']);
  });

  it('splits at anything that is not a letter, digit or mark', () => {
    expect(searchWords('ada.lovelace+work@example-mail.co.uk')).toEqual(['ada', 'lovelace', 'work', 'example', 'mail', 'co', 'uk']);
    expect(searchWords('NEAR(x) AND y*')).toEqual(['near', 'x', 'and', 'y']);
    expect(searchWords("O'Brien \\ Sons_2 😀 100%")).toEqual(['o', 'brien', 'sons', '2', '100']);
    expect(searchWords('王小明 李')).toEqual(['王小明', '李']);
    expect(searchWords('%*"\\')).toEqual([]);
  });
});

describe('searchRank', () => {
  it('exact: the words of the name or of the email are the query’s, whatever the case, accents or punctuation', () => {
    expect(searchRank('ada lovelace', contact({ name: 'Ada Lovelace' }))).toBe(SearchRank.exact);
    expect(searchRank('ADA@EXAMPLE.COM', contact({ email: 'ada@example.com' }))).toBe(SearchRank.exact);
    expect(searchRank('ada example com', contact({ email: 'ada@example.com' }))).toBe(SearchRank.exact);
    expect(searchRank('emile zola', contact({ name: 'Émile Zola' }))).toBe(SearchRank.exact);
    expect(searchRank("o'brien", contact({ name: 'O’Brien' }))).toBe(SearchRank.exact);
  });

  it('prefix: the name or the email starts with the query’s words, the last one possibly cut short', () => {
    expect(searchRank('ada', contact({ name: 'Ada Lovelace' }))).toBe(SearchRank.prefix);
    expect(searchRank('ada lov', contact({ name: 'Ada Lovelace' }))).toBe(SearchRank.prefix);
    expect(searchRank('a', contact({ name: 'Ada Lovelace' }))).toBe(SearchRank.prefix);
    expect(searchRank('ada@', contact({ email: 'ada@example.com' }))).toBe(SearchRank.prefix);
    expect(searchRank('ada ex', contact({ email: 'ada@example.com' }))).toBe(SearchRank.prefix);
    expect(searchRank('ad lovelace', contact({ name: 'Ada Lovelace' }))).toBe(SearchRank.words);
  });

  it('words: each query word starts a word of any searched field or tag, in any order and across fields', () => {
    expect(searchRank('love', contact({ name: 'Ada Lovelace' }))).toBe(SearchRank.words);
    expect(searchRank('lovelace ada', contact({ name: 'Ada Lovelace' }))).toBe(SearchRank.words);
    expect(searchRank('example', contact({ email: 'ada@example.com' }))).toBe(SearchRank.words);
    expect(searchRank('gma', contact({ email: 'ada.l@gmail.com' }))).toBe(SearchRank.words);
    expect(searchRank('analytic', contact({ company: 'Analytical Engines' }))).toBe(SearchRank.words);
    expect(searchRank('eng', contact({ title: 'Chief-Engineer' }))).toBe(SearchRank.words);
    expect(searchRank('camb', contact({ school: 'Univ. of Cambridge' }))).toBe(SearchRank.words);
    expect(searchRank('lon', contact({ location: 'London, UK' }))).toBe(SearchRank.words);
    expect(searchRank('math', contact({ tags: ['friend', 'mathematician'] }))).toBe(SearchRank.words);
    expect(searchRank('club', contact({ tags: ['anniversary-club'] }))).toBe(SearchRank.words);
    expect(searchRank('ada analytic', contact({ name: 'Ada Lovelace', company: 'Analytical' }))).toBe(SearchRank.words);
    expect(searchRank('friend math', contact({ tags: ['friend', 'math'] }))).toBe(SearchRank.words);
  });

  it('no match: a query word starts no word (a word’s middle is not enough), or the query has no word at all', () => {
    expect(searchRank('velac', contact({ name: 'Ada Lovelace' }))).toBeNull();
    expect(searchRank('ada zzz', contact({ name: 'Ada Lovelace' }))).toBeNull();
    expect(searchRank('zzz', contact({ name: 'Ada' }))).toBeNull();
    expect(searchRank('ada', EMPTY)).toBeNull();
    expect(searchRank('%', contact({ name: '100% Deal' }))).toBeNull();
    expect(searchRank('"', contact({ name: '"Quoted"' }))).toBeNull();
  });

  it('takes the query literally: no wildcard or operator has a meaning, punctuation only separates words', () => {
    expect(searchRank('a_z', contact({ name: 'Ada' }))).toBeNull();
    expect(searchRank('a_a', contact({ name: 'A A' }))).toBe(SearchRank.exact);
    expect(searchRank('ad*', contact({ name: 'Ada' }))).toBe(SearchRank.prefix);
    expect(searchRank('ada OR bob', contact({ name: 'Bob' }))).toBeNull();
    expect(searchRank('100%', contact({ name: 'Growth 100%' }))).toBe(SearchRank.words);
    expect(searchRank('NEAR(x) AND y*', contact({ name: 'NEAR(x) AND y*' }))).toBe(SearchRank.exact);
  });
});

describe('searchMatcher', () => {
  it('ranks the SearchText a store reads: name and email, and the rest joined by any separator', () => {
    const matcher = searchMatcher('  Ada, LOVE!  ');
    expect(matcher.words).toEqual(['ada', 'love']);
    expect(matcher.rank({ name: 'Ada Lovelace', email: null, rest: null })).toBe(SearchRank.prefix);
    expect(matcher.rank({ name: 'Ada', email: null, rest: 'Lovelace Ltd\nfriend' })).toBe(SearchRank.words);
    expect(matcher.rank({ name: 'Ada', email: null, rest: null })).toBeNull();
  });

  it('counts a repeated word once: "e e e e" asks for one word starting with e', () => {
    expect(searchMatcher('e e e e').rank({ name: 'Eve', email: null, rest: null })).toBe(SearchRank.words);
    expect(searchMatcher('e e').rank({ name: 'E E', email: null, rest: null })).toBe(SearchRank.exact);
  });

  it('gives the same rank as searchRank on the contact’s searchText', () => {
    const values = contact({ name: 'Ada', company: 'Analytical', tags: ['math', 'poetry'] });
    expect(searchText(values)).toEqual({ name: 'Ada', email: null, rest: 'Analytical\nmath\npoetry' });
    expect(searchMatcher('poe').rank(searchText(values))).toBe(searchRank('poe', values));
  });
});
