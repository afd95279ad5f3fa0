import type { ChangeLogState, ChangePosition } from '../../domain/changes.js';
import { canonicalId } from '../../domain/ids.js';
import { AFTER_EVERY_ID, changeRecord, type ChangeRow, positionBefore } from '../change-record.js';
import type { SortKey } from '../../domain/pagination.js';
import { listableSql } from '../listable.js';
import type { ChangeRead, ListedRead } from '../contracts/contact-store.js';
import type { StatementCache } from './statements.js';
import type { SqliteWriteLock } from './transaction.js';
import { SQLITE_DIALECT } from './dialect.js';

const LOG_STATE_SQL = 'SELECT change_seq AS currentSeq, changes_from AS changesFrom FROM owner_listing WHERE owner_id = ?';

const READ_CHANGES_SQL = `
  SELECT ch.contact_id, ch.seq, ch.changed_at, ch.deleted_name,
         c.owner_id AS contact_owner, c.is_self, c.merged_into, c.name, survivor.name AS merged_into_name, c.api_json
  FROM contact_changes ch LEFT JOIN contacts c ON c.id = ch.contact_id
  LEFT JOIN contacts survivor ON survivor.id = c.merged_into
  WHERE ch.owner_id = @owner AND (ch.seq, ch.contact_id) > (@seq, @after)
  ORDER BY ch.seq, ch.contact_id LIMIT @limit`;

const readListedSql = (seek: string) => `
  SELECT created_at, id, updated_at, api_json FROM contacts
  WHERE ${listableSql(SQLITE_DIALECT, '@owner')} ${seek}
  ORDER BY created_at, id LIMIT @limit`;
const READ_LISTED_FROM_START_SQL = readListedSql('');
const READ_LISTED_AFTER_SQL = readListedSql('AND (created_at, id) > (@created_at, @id)');

const NO_LOG: ChangeLogState = { currentSeq: 0, changesFrom: 0 };

export function sqliteChangeLog(statements: StatementCache, ownerId: string): ChangeLogState {
  const owner = canonicalId(ownerId);
  if (owner === null) return NO_LOG;
  return (statements.get(LOG_STATE_SQL).get(owner) as ChangeLogState | undefined) ?? NO_LOG;
}

export function sqliteReadChanges(statements: StatementCache, ownerId: string, after: ChangePosition, limit: number): ChangeRead {
  const owner = canonicalId(ownerId);
  if (owner === null) return { log: NO_LOG, records: [] };
  // One read transaction: the log's state and the changes agree on one snapshot.
  return statements.db.transaction(() => ({
    log: sqliteChangeLog(statements, owner),
    records: (
      statements.get(READ_CHANGES_SQL).all({ owner, seq: after.seq, after: after.after ?? AFTER_EVERY_ID, limit }) as ChangeRow[]
    ).map((row) => changeRecord(owner, row)),
  }))();
}

export function sqliteReadListed(statements: StatementCache, ownerId: string, after: SortKey | null, limit: number): ListedRead {
  const owner = canonicalId(ownerId);
  if (owner === null) return { log: NO_LOG, contacts: [] };
  const rows = statements.db.transaction(() => ({
    log: sqliteChangeLog(statements, owner),
    rows: (after === null
      ? statements.get(READ_LISTED_FROM_START_SQL).all({ owner, limit })
      : statements.get(READ_LISTED_AFTER_SQL).all({ owner, limit, created_at: after.created_at, id: after.id })) as {
      created_at: string;
      id: string;
      updated_at: string;
      api_json: string;
    }[],
  }))();
  return {
    log: rows.log,
    contacts: rows.rows.map((row) => ({ key: { created_at: row.created_at, id: row.id }, updatedAt: row.updated_at, json: row.api_json })),
  };
}

const COUNT_CHANGES_SQL = 'SELECT count(*) AS count FROM contact_changes WHERE owner_id = ? AND (seq, contact_id) > (?, ?)';
/** Walks the owner's log in seq order (its feed index) to the first change at or after the time. */
const FIRST_SEQ_AT_SQL = 'SELECT seq FROM contact_changes WHERE owner_id = ? AND changed_at >= ? ORDER BY seq LIMIT 1';

export function sqliteCountChangesAfter(statements: StatementCache, ownerId: string, after: ChangePosition): number {
  const owner = canonicalId(ownerId);
  if (owner === null) return 0;
  return (statements.get(COUNT_CHANGES_SQL).get(owner, after.seq, after.after ?? AFTER_EVERY_ID) as { count: number }).count;
}

/** SQLite runs no TRUNCATE, so its log always reaches back to any time (as far as the retention keeps it). */
export function sqlitePositionAt(statements: StatementCache, ownerId: string, time: string): ChangePosition {
  const owner = canonicalId(ownerId);
  if (owner === null) return { seq: NO_LOG.currentSeq, after: null };
  return statements.db.transaction(() => {
    const first = statements.get(FIRST_SEQ_AT_SQL).get(owner, time) as { seq: number } | undefined;
    return positionBefore(first?.seq ?? null, sqliteChangeLog(statements, owner));
  })();
}

/** Oldest first, a bounded batch, and only while no other connection writes: a prune never waits for a lock. */
export function sqlitePruneChanges(statements: StatementCache, writeLock: SqliteWriteLock, before: string, maxRows: number): number {
  let removed = 0;
  writeLock.runIfFree(() => {
    removed = statements
      .get(
        `DELETE FROM contact_changes WHERE (owner_id, contact_id) IN (
           SELECT owner_id, contact_id FROM contact_changes WHERE changed_at < ? ORDER BY changed_at LIMIT ?)`,
      )
      .run(before, maxRows).changes;
  });
  return removed;
}
