import type Database from 'better-sqlite3';
import { listableSql } from '../listable.js';
import type { SortKey } from '../../domain/pagination.js';
import type { ListingState, PageSource } from '../paged-listing.js';
import { SQLITE_DIALECT } from './dialect.js';

const LISTABLE = listableSql(SQLITE_DIALECT, '@owner');
// The page's rows are picked from the covering listing index alone (a deferred join), so skipped rows cost
// an index step each and only the returned rows are read, each for its stored JSON (migration 5).
const pageSql = (seek: string) => `
  SELECT c.api_json AS json
  FROM (SELECT rowid AS row FROM contacts WHERE ${LISTABLE} ${seek} ORDER BY created_at, id LIMIT @limit OFFSET @skip) page
  JOIN contacts c ON c.rowid = page.row
  ORDER BY c.created_at, c.id`;

const STATE_SQL = 'SELECT version, total FROM owner_listing WHERE owner_id = ?';
// Each sort key is found from the previous one by a seek and a skip in the covering listing index.
const FIRST_KEY_SQL = `SELECT created_at, id FROM contacts WHERE ${LISTABLE} ORDER BY created_at, id LIMIT 1`;
const KEY_AFTER_SQL = `SELECT created_at, id FROM contacts WHERE ${LISTABLE} AND (created_at, id) > (@created_at, @id)
  ORDER BY created_at, id LIMIT 1 OFFSET @skip`;

const NO_OWNER: ListingState = { version: 0, total: 0 };

const FROM_START_SQL = pageSql('');
const FROM_KEY_SQL = pageSql('AND (created_at, id) >= (@created_at, @id)');

/**
 * The SQLite side of the paged listing; each method runs in one read transaction (one snapshot).
 * Statements come from `prepare`, which must prepare lazily: the tables exist only after migrations.
 */
export function sqlitePageSource(db: Database.Database, prepare: (sql: string) => Database.Statement): PageSource {
  const readState = (ownerId: string) => (prepare(STATE_SQL).get(ownerId) as ListingState | undefined) ?? NO_OWNER;

  const readSortKeys = db.transaction((ownerId: string, stride: number, after: SortKey | null, count: number) => {
    const keys: SortKey[] = [];
    let key = after === null ? (prepare(FIRST_KEY_SQL).get({ owner: ownerId }) as SortKey | undefined) : after;
    if (after === null && key !== undefined) keys.push(key);
    while (key !== undefined && keys.length < count) {
      key = prepare(KEY_AFTER_SQL).get({ owner: ownerId, created_at: key.created_at, id: key.id, skip: stride - 1 }) as SortKey | undefined;
      if (key !== undefined) keys.push(key);
    }
    return { state: readState(ownerId), keys };
  });
  const readPage = db.transaction((ownerId: string, from: SortKey | null, skip: number, limit: number) => {
    const parameters = { owner: ownerId, skip, limit };
    const rows = (
      from === null
        ? prepare(FROM_START_SQL).pluck().all(parameters)
        : prepare(FROM_KEY_SQL)
            .pluck()
            .all({ ...parameters, ...from })
    ) as string[];
    return { state: readState(ownerId), data: `[${rows.join(',')}]`, returned: rows.length };
  });

  return {
    async state(ownerId) {
      return readState(ownerId);
    },
    async sortKeys(ownerId, stride, after, count) {
      return readSortKeys(ownerId, stride, after, count);
    },
    async page(ownerId, from, skip, limit) {
      return readPage(ownerId, from, skip, limit);
    },
  };
}
