import { InputError } from './errors.js';

export const LIMIT_MIN = 1;
export const LIMIT_MAX = 100;
export const LIMIT_DEFAULT = 50;
export const OFFSET_MIN = 0;
/** Largest offset accepted: 2^31 - 1, so every accepted value fits a 32-bit signed integer in both databases. */
export const OFFSET_MAX = 2 ** 31 - 1;
export const OFFSET_DEFAULT = 0;

export const PAGE_PARAMETERS = ['limit', 'offset'] as const;

/** Where a contact sits in the list order (`created_at`, then `id`), as the database compares them. */
export interface SortKey {
  created_at: string;
  id: string;
}

export interface PageRequest {
  limit: number;
  offset: number;
}

export interface Pagination extends PageRequest {
  total: number;
  nextOffset: number | null;
}

const DIGITS = /^[0-9]+$/;

/**
 * Reads `limit` and `offset` from a parsed query string, strictly: base-10 digits only, within bounds,
 * at most once each, and no other parameter. Throws InputError naming the offending parameter.
 */
export function parsePageRequest(query: Record<string, unknown>): PageRequest {
  for (const name of Object.keys(query)) {
    if (!(PAGE_PARAMETERS as readonly string[]).includes(name)) {
      throw new InputError(`Unknown query parameter "${name}"; accepted parameters are limit and offset`);
    }
  }
  return {
    limit: parseBoundedInteger(query, 'limit', LIMIT_MIN, LIMIT_MAX, LIMIT_DEFAULT),
    offset: parseBoundedInteger(query, 'offset', OFFSET_MIN, OFFSET_MAX, OFFSET_DEFAULT),
  };
}

function parseBoundedInteger(query: Record<string, unknown>, name: string, min: number, max: number, fallback: number): number {
  const raw = query[name];
  if (raw === undefined) return fallback;
  if (Array.isArray(raw)) throw new InputError(`Query parameter "${name}" must be given at most once`);
  const text = String(raw);
  const value = DIGITS.test(text) && text.length <= 10 ? Number(text) : Number.NaN;
  if (!Number.isSafeInteger(value) || value < min || value > max) {
    throw new InputError(`Query parameter "${name}" must be a base-10 integer from ${min} to ${max}; got "${text}"`);
  }
  return value;
}

/** The offset of the page after this one, or null when this page reaches the end of the listing. */
export function nextOffset(page: PageRequest, returned: number, total: number): number | null {
  const next = page.offset + returned;
  return returned > 0 && next < total ? next : null;
}

export function paginationOf(page: PageRequest, returned: number, total: number): Pagination {
  return { limit: page.limit, offset: page.offset, total, nextOffset: nextOffset(page, returned, total) };
}

/**
 * The list response document, `{"data":[…],"pagination":{…}}`, around contacts already serialized as a JSON
 * array: what the API sends and the agent tool returns.
 */
export function pageDocumentJson(dataJson: string, pagination: Pagination): string {
  return `{"data":${dataJson},"pagination":${JSON.stringify(pagination)}}`;
}
