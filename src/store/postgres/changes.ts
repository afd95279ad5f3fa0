import type pg from 'pg';
import type { ChangeLogState, ChangePosition } from '../../domain/changes.js';
import { canonicalId } from '../../domain/ids.js';
import { AFTER_EVERY_ID, changeRecord, type ChangeRow, positionBefore } from '../change-record.js';
import type { SortKey } from '../../domain/pagination.js';
import { listableSql } from '../listable.js';
import type { ChangeRead, ListedRead } from '../contracts/contact-store.js';
import { POSTGRES_DIALECT } from './dialect.js';
import { pruneOldest } from './prune.js';
import { utcTimestampText } from './timestamps.js';

const LOG_STATE_SQL = 'SELECT change_seq AS "currentSeq", changes_from AS "changesFrom" FROM owner_listing WHERE owner_id = $1::uuid';

/** The log's state and the changes after the position, in one statement (one snapshot). */
const READ_CHANGES_SQL = `
  SELECT l.change_seq, l.changes_from, ch.contact_id, ch.seq, ch.changed_at, ch.deleted_name,
         c.owner_id AS contact_owner, c.is_self, c.merged_into, c.name, survivor.name AS merged_into_name, c.api_json
  FROM owner_listing l
  LEFT JOIN LATERAL (
    SELECT contact_id, seq, changed_at, deleted_name FROM contact_changes
    WHERE owner_id = $1::uuid AND (seq, contact_id) > ($2::bigint, $3::uuid)
    ORDER BY seq, contact_id LIMIT $4::int
  ) ch ON true
  LEFT JOIN contacts c ON c.id = ch.contact_id
  LEFT JOIN contacts survivor ON survivor.id = c.merged_into
  WHERE l.owner_id = $1::uuid
  ORDER BY ch.seq, ch.contact_id`;

/**
 * The log's state and the listable contacts after a sort key, in one statement (one snapshot), from the listing
 * index. created_at travels as timestamptz text, which casts back to the same microsecond.
 */
const readListedSql = (seek: string) => `
  SELECT l.change_seq, l.changes_from, ${utcTimestampText('c.created_at')} AS created_at, c.id, c.updated_at, c.api_json
  FROM owner_listing l
  LEFT JOIN LATERAL (
    SELECT created_at, id, updated_at, api_json FROM contacts listed
    WHERE ${listableSql(POSTGRES_DIALECT, '$1::uuid', 'listed')} ${seek}
    ORDER BY listed.created_at, listed.id LIMIT $2::int
  ) c ON true
  WHERE l.owner_id = $1::uuid
  ORDER BY c.created_at, c.id`;
const READ_LISTED_FROM_START_SQL = readListedSql('');
const READ_LISTED_AFTER_SQL = readListedSql('AND (listed.created_at, listed.id) > ($3::timestamptz, $4::uuid)');

const NO_LOG: ChangeLogState = { currentSeq: 0, changesFrom: 0 };

export async function postgresChangeLog(pool: pg.Pool, ownerId: string): Promise<ChangeLogState> {
  const owner = canonicalId(ownerId);
  if (owner === null) return NO_LOG;
  const { rows } = await pool.query<{ currentSeq: string; changesFrom: string }>({
    name: 'changes_log',
    text: LOG_STATE_SQL,
    values: [owner],
  });
  return rows[0] ? { currentSeq: Number(rows[0].currentSeq), changesFrom: Number(rows[0].changesFrom) } : NO_LOG;
}

export async function postgresReadChanges(pool: pg.Pool, ownerId: string, after: ChangePosition, limit: number): Promise<ChangeRead> {
  const owner = canonicalId(ownerId);
  if (owner === null) return { log: NO_LOG, records: [] };
  const { rows } = await pool.query<ChangeRow & { change_seq: string; changes_from: string }>({
    name: 'changes_read',
    text: READ_CHANGES_SQL,
    values: [owner, after.seq, after.after ?? AFTER_EVERY_ID, limit],
  });
  const first = rows[0];
  if (!first) return { log: NO_LOG, records: [] };
  return {
    log: { currentSeq: Number(first.change_seq), changesFrom: Number(first.changes_from) },
    records: rows.filter((row) => row.contact_id !== null).map((row) => changeRecord(owner, row)),
  };
}

interface ListedRow {
  change_seq: string;
  changes_from: string;
  created_at: string | null;
  id: string;
  updated_at: string;
  api_json: string;
}

export async function postgresReadListed(pool: pg.Pool, ownerId: string, after: SortKey | null, limit: number): Promise<ListedRead> {
  const owner = canonicalId(ownerId);
  if (owner === null) return { log: NO_LOG, contacts: [] };
  const { rows } = await pool.query<ListedRow>(
    after === null
      ? { name: 'changes_listed', text: READ_LISTED_FROM_START_SQL, values: [owner, limit] }
      : { name: 'changes_listed_after', text: READ_LISTED_AFTER_SQL, values: [owner, limit, after.created_at, after.id] },
  );
  const first = rows[0];
  if (!first) return { log: NO_LOG, contacts: [] };
  return {
    log: { currentSeq: Number(first.change_seq), changesFrom: Number(first.changes_from) },
    contacts: rows
      .filter((row) => row.created_at !== null)
      .map((row) => ({ key: { created_at: row.created_at!, id: row.id }, updatedAt: row.updated_at, json: row.api_json })),
  };
}

const COUNT_CHANGES_SQL =
  'SELECT count(*)::int AS count FROM contact_changes WHERE owner_id = $1::uuid AND (seq, contact_id) > ($2::bigint, $3::uuid)';
/**
 * The log's state, whether a TRUNCATE cleared it after the time, and, walking the owner's log in seq order (its feed
 * index), the first change at or after the time.
 */
const FIRST_SEQ_AT_SQL = `
  SELECT l.change_seq, l.changes_from_at > $2::timestamptz AS cleared_after,
    (SELECT seq FROM contact_changes WHERE owner_id = $1::uuid AND changed_at >= $2::timestamptz
    ORDER BY seq LIMIT 1) AS first_seq
  FROM owner_listing l WHERE l.owner_id = $1::uuid`;

export async function postgresCountChangesAfter(pool: pg.Pool, ownerId: string, after: ChangePosition): Promise<number> {
  const owner = canonicalId(ownerId);
  if (owner === null) return 0;
  const { rows } = await pool.query<{ count: number }>({
    name: 'changes_count',
    text: COUNT_CHANGES_SQL,
    values: [owner, after.seq, after.after ?? AFTER_EVERY_ID],
  });
  return rows[0]!.count;
}

export async function postgresPositionAt(pool: pg.Pool, ownerId: string, time: string): Promise<ChangePosition | null> {
  const owner = canonicalId(ownerId);
  if (owner === null) return { seq: NO_LOG.currentSeq, after: null };
  const { rows } = await pool.query<{ change_seq: string; cleared_after: boolean | null; first_seq: string | null }>({
    name: 'changes_position_at',
    text: FIRST_SEQ_AT_SQL,
    values: [owner, time],
  });
  const row = rows[0];
  if (!row) return { seq: NO_LOG.currentSeq, after: null };
  if (row.cleared_after === true) return null;
  return positionBefore(row.first_seq === null ? null : Number(row.first_seq), { ...NO_LOG, currentSeq: Number(row.change_seq) });
}

/** Oldest first, a bounded batch: a prune never holds locks on much of the table. */
export async function postgresPruneChanges(pool: pg.Pool, before: string, maxRows: number): Promise<number> {
  return pruneOldest(pool, 'contact_changes', 'changed_at', before, maxRows);
}
