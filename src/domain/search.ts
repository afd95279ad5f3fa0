import { InputError } from './errors.js';

export const SEARCH_QUERY_MAX_LENGTH = 200;
/**
 * The most words (as searchWords splits them) a query may have: each is one more test of every contact a search
 * reads, and one more term for the index. Ten holds a full name with company and city, or a long email address.
 */
export const SEARCH_QUERY_MAX_WORDS = 10;
export const SEARCH_LIMIT_MIN = 1;
export const SEARCH_LIMIT_MAX = 50;
export const SEARCH_LIMIT_DEFAULT = 10;

/** The contact fields a search looks in; each tag is searched as a value of its own. */
export const SEARCH_FIELDS = ['name', 'email', 'company', 'title', 'school', 'location', 'tags'] as const;

export interface SearchRequest {
  /** Trimmed, 1 to SEARCH_QUERY_MAX_LENGTH characters, at most SEARCH_QUERY_MAX_WORDS words, no control characters. */
  query: string;
  limit: number;
}

/** The values of one contact's SEARCH_FIELDS. */
export interface SearchableContact {
  name: string | null;
  email: string | null;
  company: string | null;
  title: string | null;
  school: string | null;
  location: string | null;
  tags: readonly string[] | null;
}

/**
 * How well a contact matches, best first. Ties are broken by the list order (created_at, then id).
 * Text is compared as folded words (see searchWords): case, Latin accents, spacing and punctuation never matter.
 */
export const SearchRank = {
  /** The words of `name` or of `email` are exactly the query's words. */
  exact: 0,
  /** The words of `name` or of `email` start with the query's words (the last one may be a prefix). */
  prefix: 1,
  /** Each word of the query starts some word of a searched field or tag. */
  words: 2,
} as const;

export type SearchRank = (typeof SearchRank)[keyof typeof SearchRank];

/**
 * Latin letters, before their accents. Folding drops the combining marks U+0300–U+036F that follow one of these
 * once the text is decomposed (NFD), so é, è, ê and ë all become e; other scripts keep their marks (й is not и).
 * PostgreSQL's migration 4 folds with a copy of this class: changing it needs a new migration that recomputes the index.
 */
const LATIN_LETTER_CLASS =
  'A-Za-z\u00aa\u00ba\u00c0-\u00d6\u00d8-\u00f6\u00f8-\u02af\u1d00-\u1dbf\u1e00-\u1eff\u2c60-\u2c7f\ua720-\ua7ff\uab30-\uab6f';
/** The combining marks Latin accents decompose into. */
const LATIN_ACCENT_CLASS = '\u0300-\u036f';

const ACCENTED_LATIN = new RegExp(`([${LATIN_LETTER_CLASS}])[${LATIN_ACCENT_CLASS}]+`, 'g');
// eslint-disable-next-line no-control-regex -- ASCII starts at NUL: the range is the point
const ASCII = /^[\u0000-\u007f]*$/;
const ASCII_WORD = /[a-z0-9]+/g;
const WORD = /[\p{L}\p{N}\p{M}]+/gu;

/**
 * Text as search compares it: lower case code point by code point (so no context-dependent mapping such as a
 * final sigma), Latin letters without accents, in NFC.
 */
function foldSearchText(text: string): string {
  if (ASCII.test(text)) return text.toLowerCase();
  let lower = '';
  for (const character of text) lower += character.toLowerCase();
  return lower.normalize('NFD').replace(ACCENTED_LATIN, '$1').normalize('NFC');
}

/**
 * The folded words of a text, in order. A word is a run of letters, digits and combining marks; everything else
 * (spaces, punctuation, symbols) only separates words. So `jo sm` finds John Smith, `gmail` finds x@gmail.com,
 * and `"`, `%` or `*` are never syntax.
 */
export function searchWords(text: string): string[] {
  const folded = foldSearchText(text);
  return folded.match(ASCII.test(folded) ? ASCII_WORD : WORD) ?? [];
}

/**
 * What ranking reads of a contact: `name` and `email`, which the exact and prefix ranks look at, and the rest of
 * its searched text (company, title, school, location and each tag) joined by any separator. Stores read this shape
 * straight from the database, so ranking a row costs no decoding.
 */
export interface SearchText {
  name: string | null;
  email: string | null;
  rest: string | null;
}

/** The SearchText of a contact. */
export function searchText(contact: SearchableContact): SearchText {
  const rest = [contact.company, contact.title, contact.school, contact.location, ...(contact.tags ?? [])];
  return { name: contact.name, email: contact.email, rest: rest.filter((value) => value !== null).join('\n') };
}

export type SearchField = (typeof SEARCH_FIELDS)[number];

/** A query prepared once to rank many contacts. */
export interface SearchMatcher {
  /** The query's folded words; a query without any (only punctuation) matches nothing. */
  readonly words: readonly string[];
  rank(text: SearchText): SearchRank | null;
  /** The fields, in SEARCH_FIELDS order, of which some word starts with a word of the query. */
  matchedFields(contact: SearchableContact): SearchField[];
  /** How the contact's name alone matches: exact, prefix, or null (not by its name). */
  nameRank(name: string | null): SearchRank | null;
}

const NOT_AFTER_WORD_CHARACTER = '(?<![\\p{L}\\p{N}\\p{M}])';

/** Prepares `query` (as parseSearchRequest returns it) for ranking contacts. */
export function searchMatcher(query: string): SearchMatcher {
  const words = searchWords(query);
  const phrase = words.join(' ');
  // A word of the query starts a word of the text when no letter, digit or mark comes right before it. Words are
  // letters, digits and marks only, so each is a literal pattern.
  const starts = [...new Set(words)].map((word) => new RegExp(NOT_AFTER_WORD_CHARACTER + word, 'u'));
  const lead = (value: string | null): SearchRank | null => {
    if (value === null) return null;
    // Words hold no spaces, so the joined text starts with the joined query exactly when the first words equal the
    // query's and the next one starts with its last word.
    const own = searchWords(value).join(' ');
    if (own === phrase) return SearchRank.exact;
    return own.startsWith(phrase) ? SearchRank.prefix : null;
  };
  const startsAWord = (value: string) => {
    const folded = foldSearchText(value);
    return starts.some((start) => start.test(folded));
  };
  return {
    words,
    rank(text) {
      if (words.length === 0) return null;
      const all = foldSearchText([text.name, text.email, text.rest].filter((value) => value !== null).join('\n'));
      if (!starts.every((start) => start.test(all))) return null;
      const name = lead(text.name);
      const email = lead(text.email);
      if (name === SearchRank.exact || email === SearchRank.exact) return SearchRank.exact;
      return name !== null || email !== null ? SearchRank.prefix : SearchRank.words;
    },
    matchedFields(contact) {
      return SEARCH_FIELDS.filter((field) => {
        const value = contact[field];
        if (value === null) return false;
        return typeof value === 'string' ? startsAWord(value) : value.some(startsAWord);
      });
    },
    nameRank(name) {
      return words.length === 0 ? null : lead(name);
    },
  };
}

/** The SearchRank of a contact for a query, or null when it does not match at all. */
export function searchRank(query: string, contact: SearchableContact): SearchRank | null {
  return searchMatcher(query).rank(searchText(contact));
}

// Control characters (C0, DEL, C1): never typed in a search.
// eslint-disable-next-line no-control-regex -- finding control characters is what it is for
const CONTROL_CHARACTER = /[\u0000-\u001f\u007f-\u009f]/;

/**
 * Validates a search: the query is trimmed and must then be 1 to 200 characters without control characters
 * (NUL included), of at most 10 words; `limit` is an integer from 1 to 50, default 10. Throws InputError naming the
 * problem.
 */
export function parseSearchRequest(input: { query: unknown; limit?: unknown }): SearchRequest {
  if (typeof input.query !== 'string') throw new InputError('"query" must be a string');
  const query = input.query.trim();
  const length = [...query].length;
  if (length === 0) throw new InputError('"query" must not be empty');
  if (length > SEARCH_QUERY_MAX_LENGTH) {
    throw new InputError(`"query" must be at most ${SEARCH_QUERY_MAX_LENGTH} characters; got ${length}`);
  }
  if (CONTROL_CHARACTER.test(query)) throw new InputError('"query" must not contain control characters');
  const words = searchWords(query).length;
  if (words > SEARCH_QUERY_MAX_WORDS) throw new InputError(`"query" must have at most ${SEARCH_QUERY_MAX_WORDS} words; got ${words}`);
  const limit = input.limit === undefined ? SEARCH_LIMIT_DEFAULT : input.limit;
  if (typeof limit !== 'number' || !Number.isInteger(limit) || limit < SEARCH_LIMIT_MIN || limit > SEARCH_LIMIT_MAX) {
    throw new InputError(`"limit" must be an integer from ${SEARCH_LIMIT_MIN} to ${SEARCH_LIMIT_MAX}; got ${String(limit)}`);
  }
  return { query, limit };
}
