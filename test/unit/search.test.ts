import { describe, expect, it } from 'vitest';
import { InputError } from '../../src/domain/errors.js';
import {
  parseSearchRequest,
  SEARCH_LIMIT_DEFAULT,
  SEARCH_LIMIT_MAX,
  SEARCH_LIMIT_MIN,
  SEARCH_QUERY_MAX_LENGTH,
  SearchRank,
  searchRank,
  spaceWords,
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

describe('searchRank', () => {
  it('exact: the name or the email equals the query, in any case', () => {
    expect(searchRank('ada lovelace', contact({ name: 'Ada Lovelace' }))).toBe(SearchRank.exact);
    expect(searchRank('ADA@EXAMPLE.COM', contact({ email: 'ada@example.com' }))).toBe(SearchRank.exact);
  });

  it('prefix: the name or the email starts with the query', () => {
    expect(searchRank('ada', contact({ name: 'Ada Lovelace' }))).toBe(SearchRank.prefix);
    expect(searchRank('ada@', contact({ email: 'ada@example.com' }))).toBe(SearchRank.prefix);
  });

  it('word prefix: a word of any searched field, or a tag, starts with the query', () => {
    expect(searchRank('love', contact({ name: 'Ada Lovelace' }))).toBe(SearchRank.wordPrefix);
    expect(searchRank('example', contact({ email: 'ada@example.com' }))).toBe(SearchRank.wordPrefix);
    expect(searchRank('analytic', contact({ company: 'Analytical Engines' }))).toBe(SearchRank.wordPrefix);
    expect(searchRank('eng', contact({ title: 'Chief-Engineer' }))).toBe(SearchRank.wordPrefix);
    expect(searchRank('camb', contact({ school: 'Univ. of Cambridge' }))).toBe(SearchRank.wordPrefix);
    expect(searchRank('lon', contact({ location: 'London, UK' }))).toBe(SearchRank.wordPrefix);
    expect(searchRank('math', contact({ tags: ['friend', 'mathematician'] }))).toBe(SearchRank.wordPrefix);
    expect(searchRank('lovelace anal', contact({ name: 'Ada Lovelace', company: 'Analytical' }))).toBeNull();
  });

  it('substring: any searched field, or a tag, contains the query', () => {
    expect(searchRank('velac', contact({ name: 'Ada Lovelace' }))).toBe(SearchRank.substring);
    expect(searchRank('ytic', contact({ company: 'Analytical' }))).toBe(SearchRank.substring);
    expect(searchRank('ema', contact({ tags: ['mathematician'] }))).toBe(SearchRank.substring);
  });

  it('no match: the query is in no searched field, or only across two tags', () => {
    expect(searchRank('zzz', contact({ name: 'Ada' }))).toBeNull();
    expect(searchRank('friend math', contact({ tags: ['friend', 'math'] }))).toBeNull();
    expect(searchRank('ada', EMPTY)).toBeNull();
  });

  it('takes the query literally: no wildcard or operator has a meaning', () => {
    expect(searchRank('%', contact({ name: 'Ada' }))).toBeNull();
    expect(searchRank('a_a', contact({ name: 'Ada' }))).toBeNull();
    expect(searchRank('a*', contact({ name: 'Ada' }))).toBeNull();
    expect(searchRank('100%', contact({ name: 'Growth 100%' }))).toBe(SearchRank.wordPrefix);
  });
});

describe('spaceWords', () => {
  it('turns every separator and the field joiner into a space', () => {
    expect(spaceWords('a-b_c.d,e;f:g!h?i@j#k/l\\m&n+o(p)q[r]s{t}u<v>w\'x"y|z~1*2=3\u001f4\t5')).toBe(
      'a b c d e f g h i j k l m n o p q r s t u v w x y z 1 2 3 4 5',
    );
  });
});
