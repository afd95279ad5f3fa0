import { InputError } from '../domain/errors.js';
import { canonicalId } from '../domain/ids.js';
import type { ListedContact } from './contracts/contact-store.js';

/** The most ids one ContactStore.getMany call takes: one bounded query (a uuid[] or a JSON array of them). */
export const GET_MANY_MAX_IDS = 500;

/** The distinct ids of a getMany call as stored, malformed ones dropped (they name nothing); throws for too many. */
export function idsToGet(ids: readonly string[]): string[] {
  if (ids.length > GET_MANY_MAX_IDS) throw new InputError(`At most ${GET_MANY_MAX_IDS} contact ids can be read at once; got ${ids.length}`);
  return [...new Set(ids.map(canonicalId).filter((id) => id !== null))];
}

/** A listable contact's row as getMany reads it (created_at as text that casts back to the same instant). */
export interface ListedRow {
  created_at: string;
  id: string;
  updated_at: string;
  api_json: string;
}

export function listedContactOf(row: ListedRow): ListedContact {
  return { key: { created_at: row.created_at, id: row.id }, updatedAt: row.updated_at, json: row.api_json };
}
