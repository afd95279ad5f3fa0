import type pg from 'pg';
import type { ImportOutcome } from '../contracts/contact-store.js';
import { queryable } from './transaction.js';

/**
 * Contacts written (created, updated or merged) from which an import brings the planner's statistics and the visibility
 * map up to date itself. Below it autovacuum's own thresholds are near, and a small import leaves plans as they were.
 */
const TIDY_FROM_ROWS = 1000;

/**
 * Right after a committed import, what autovacuum would do minutes later, while readers meet the new rows: ANALYZE
 * (statistics for the planner: a fresh table looks empty to it) and VACUUM (the visibility map, without which an
 * index-only scan of the listing index visits the table for every entry it skips). VACUUM cannot run inside the
 * transaction, so it follows the COMMIT; it reads only the pages not yet all-visible (those the import wrote) and ANALYZE
 * a bounded sample, so its time follows the import's size, not the table's, and the pool's statement timeout bounds it.
 * Interrupted or failed, it leaves the committed import whole and the rest to autovacuum, so its error is not the import's.
 * Inside a bulk load's transaction it waits for that load, which does the same once committed.
 */
export async function tidyAfterImport(pool: pg.Pool, written: Pick<ImportOutcome, 'created' | 'updated' | 'merged'>): Promise<void> {
  if (written.created + written.updated + written.merged < TIDY_FROM_ROWS || queryable(pool) !== pool) return;
  await tidyContacts(pool).catch(() => undefined);
}

/**
 * VACUUM (ANALYZE) of the tables an import writes: the contacts, their change log, and the owners' listing state, whose
 * one row per owner the triggers rewrite for every contact (100k dead versions after a 100k import, which every state
 * read then stepped over: 20 buffers instead of 3, measured).
 */
export async function tidyContacts(pool: pg.Pool): Promise<void> {
  await pool.query('VACUUM (ANALYZE) contacts, contact_changes, owner_listing');
}
