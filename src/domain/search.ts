import { InputError } from './errors.js';

export const SEARCH_QUERY_MAX_LENGTH = 200;
export const SEARCH_LIMIT_MIN = 1;
export const SEARCH_LIMIT_MAX = 50;
export const SEARCH_LIMIT_DEFAULT = 10;

/** The contact fields a search looks in; `tags` matches each tag on its own. */
export const SEARCH_FIELDS = ['name', 'email', 'company', 'title', 'school', 'location', 'tags'] as const;

export interface SearchRequest {
  /** Trimmed, 1 to SEARCH_QUERY_MAX_LENGTH characters, no control characters. */
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
 * All comparisons are case-insensitive, and the query is literal text: no wildcard or operator syntax.
 */
export const SearchRank = {
  /** `name` or `email` equals the query. */
  exact: 0,
  /** `name` or `email` starts with the query. */
  prefix: 1,
  /** A word of any searched field (or a tag) starts with the query; words are split at SEARCH_WORD_SEPARATORS. */
  wordPrefix: 2,
  /** Any searched field (or a tag) contains the query. */
  substring: 3,
} as const;

export type SearchRank = (typeof SearchRank)[keyof typeof SearchRank];

/**
 * Characters that end a word, besides the boundaries between fields and between tags. Each store compares
 * words by translating these to spaces, so the set is spelled out rather than left to a locale's notion of a letter.
 * PostgreSQL stores the translated text (migration 2): changing the set needs a migration that recomputes it.
 */
export const SEARCH_WORD_SEPARATORS = ' \t\n\r-_.,;:!?@#/\\&+()[]{}<>\'"|~*=';

/**
 * Joins field values into one text, as the PostgreSQL index does, so a query can never match across two of them:
 * queries cannot contain this control character.
 */
export const SEARCH_FIELD_JOINER = '\u001f';

// Control characters (C0, DEL, C1): never typed in a search, and the joiner must stay out of queries.
const CONTROL_CHARACTER = /[\u0000-\u001f\u007f-\u009f]/;

/**
 * Validates a search: the query is trimmed and must then be 1 to 200 characters without control characters
 * (NUL included); `limit` is an integer from 1 to 50, default 10. Throws InputError naming the problem.
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
  const limit = input.limit === undefined ? SEARCH_LIMIT_DEFAULT : input.limit;
  if (typeof limit !== 'number' || !Number.isInteger(limit) || limit < SEARCH_LIMIT_MIN || limit > SEARCH_LIMIT_MAX) {
    throw new InputError(`"limit" must be an integer from ${SEARCH_LIMIT_MIN} to ${SEARCH_LIMIT_MAX}; got ${String(limit)}`);
  }
  return { query, limit };
}

const SEPARATOR = new RegExp(`[${SEARCH_WORD_SEPARATORS.replace(/[\\\]^-]/g, '\\$&')}${SEARCH_FIELD_JOINER}]`, 'gu');

/** Text with every word separator (and the field joiner) turned into a space, as both stores compare words. */
export function spaceWords(text: string): string {
  return text.replace(SEPARATOR, ' ');
}

/** The SearchRank of a contact for a query, or null when it does not match at all. */
export function searchRank(query: string, contact: SearchableContact): SearchRank | null {
  const needle = query.toLowerCase();
  const name = contact.name?.toLowerCase() ?? null;
  const email = contact.email?.toLowerCase() ?? null;
  if (name === needle || email === needle) return SearchRank.exact;
  if (name?.startsWith(needle) || email?.startsWith(needle)) return SearchRank.prefix;
  const values = [contact.name, contact.email, contact.company, contact.title, contact.school, contact.location, ...(contact.tags ?? [])]
    .filter((value): value is string => value !== null)
    .map((value) => value.toLowerCase());
  if (!values.some((value) => value.includes(needle))) return null;
  const words = ` ${spaceWords(values.join(SEARCH_FIELD_JOINER))}`;
  return words.includes(` ${spaceWords(needle)}`) ? SearchRank.wordPrefix : SearchRank.substring;
}
