import { UnexpectedResponseError } from './errors.js';
import type { Contact, ContactListResponse, Pagination } from './types.js';

/** Rows each request repeats from the end of the previous one, so a few disappearing rows cost no extra request. */
const OVERLAP = 5;

export interface WalkOptions {
  /** Rows asked for per request (the API's `limit`, 2–100), counting the overlap with the previous request. */
  pageSize: number;
  /** Called with the pagination of every page fetched (for progress displays: `total`). */
  onPage?: (pagination: Pagination) => void;
}

/**
 * Yields every contact of the listing once, in list order, while contacts are added and soft-merged
 * during the walk. `fetchPage` returns one page (one server-side snapshot) at an offset.
 *
 * Why plain offset paging is not enough: when a row before the current offset disappears (a merge), every
 * later row moves one position left, and the row that was first on the next page slides onto the page
 * already read: it is skipped. A row inserted before the offset moves rows right and repeats one.
 *
 * The algorithm relies on the order the API documents (`created_at`, then `id`, ascending; a total order in
 * which a row keeps its place relative to the others) and keeps only the sort key of the last contact yielded:
 *
 * 1. Each request starts OVERLAP rows before where the previous page ended, asking for `pageSize` rows.
 * 2. In sync: the page starts at offset 0 or with a row at or before the last one yielded. A page is one
 *    contiguous run of the list at one instant, so it then holds every row that sits between the last row
 *    yielded and its own end: yielding its rows that sort after the last one loses nothing in that range.
 * 3. Out of sync: the page starts after the last row yielded (or is empty past offset 0). Rows may have
 *    moved left past the offset, so the page is discarded and the walk steps back: by the drop in `total`
 *    since the previous page (at least OVERLAP) the first time, doubling each further time, down to 0.
 * 4. It ends after an in-sync page with `nextOffset: null`: that page reaches the end of the list.
 *
 * Guarantees: the keys yielded strictly increase, so no id is yielded twice; every contact that exists for
 * the whole walk (and keeps its `created_at`) is yielded, by (2) and (4); a contact added during the walk is
 * yielded at most once, when it sorts after the rows already yielded; a contact merged away during the walk is
 * yielded at most once. A page out of key order breaks the premise, so it fails the walk instead of
 * risking a silent gap. Memory is constant, whatever the number of contacts.
 */
export async function* walkContacts(
  fetchPage: (offset: number, limit: number) => Promise<ContactListResponse>,
  options: WalkOptions,
): AsyncGenerator<Contact, void, undefined> {
  const limit = options.pageSize;
  if (!Number.isInteger(limit) || limit < 2 || limit > 100) {
    throw new RangeError(`pageSize must be an integer from 2 to 100 (each page overlaps the previous one); got ${limit}`);
  }
  const overlap = Math.min(OVERLAP, limit - 1);
  let last: SortKey | null = null;
  let offset = 0;
  let previousTotal: number | null = null;
  let misses = 0;
  for (;;) {
    const page = await fetchPage(offset, limit);
    options.onPage?.(page.pagination);
    const keys = page.data.map(sortKey);
    assertAscending(keys);
    const first = keys[0];
    const inSync = offset === 0 || (first !== undefined && last !== null && compare(first, last) <= 0);
    if (!inSync) {
      const shrunk = previousTotal === null ? 0 : previousTotal - page.pagination.total;
      offset = Math.max(0, offset - Math.max(overlap, shrunk) * 2 ** misses);
      misses += 1;
      continue;
    }
    misses = 0;
    for (const [index, contact] of page.data.entries()) {
      const key = keys[index]!;
      if (last !== null && compare(key, last) <= 0) continue;
      last = key;
      yield contact;
    }
    if (page.pagination.nextOffset === null) return;
    offset = Math.max(0, offset + page.data.length - overlap);
    previousTotal = page.pagination.total;
  }
}

interface SortKey {
  createdAt: number;
  id: string;
}

function sortKey(contact: Contact): SortKey {
  const createdAt = Date.parse(contact.created_at);
  if (Number.isNaN(createdAt)) {
    throw new UnexpectedResponseError(`contact ${contact.id} has no readable created_at ("${contact.created_at}")`);
  }
  return { createdAt, id: contact.id.toLowerCase() };
}

/** The API's order: created_at, then id (lower-case hex UUIDs compare as the databases compare them). */
function compare(a: SortKey, b: SortKey): number {
  if (a.createdAt !== b.createdAt) return a.createdAt - b.createdAt;
  return a.id < b.id ? -1 : a.id > b.id ? 1 : 0;
}

function assertAscending(keys: readonly SortKey[]): void {
  for (let i = 1; i < keys.length; i++) {
    if (compare(keys[i - 1]!, keys[i]!) >= 0) {
      throw new UnexpectedResponseError(
        `the page is not in created_at, id order (${keys[i - 1]!.id} before ${keys[i]!.id}); the walk cannot guarantee every contact`,
      );
    }
  }
}
