import type pg from 'pg';
import type { ChangeLogState, ChangePosition } from '../../domain/changes.js';
import { canonicalId } from '../../domain/ids.js';
import { AFTER_EVERY_ID, changeRecord, type ChangeRow } from '../change-record.js';
import type { ChangeRead } from '../store.js';

const LOG_STATE_SQL = 'SELECT change_seq AS "currentSeq", changes_from AS "changesFrom" FROM owner_listing WHERE owner_id = $1::uuid';

/** The log's state and the changes after the position, in one statement (one snapshot). */
const READ_CHANGES_SQL = `
  SELECT l.change_seq, l.changes_from, ch.contact_id, ch.seq, ch.changed_at,
         c.owner_id AS contact_owner, c.is_self, c.merged_into, c.api_json
  FROM owner_listing l
  LEFT JOIN LATERAL (
    SELECT contact_id, seq, changed_at FROM contact_changes
    WHERE owner_id = $1::uuid AND (seq, contact_id) > ($2::bigint, $3::uuid)
    ORDER BY seq, contact_id LIMIT $4::int
  ) ch ON true
  LEFT JOIN contacts c ON c.id = ch.contact_id
  WHERE l.owner_id = $1::uuid
  ORDER BY ch.seq, ch.contact_id`;

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

/** Oldest first, a bounded batch: a prune never holds locks on much of the table. */
export async function postgresPruneChanges(pool: pg.Pool, before: string, maxRows: number): Promise<number> {
  const { rowCount } = await pool.query(
    `DELETE FROM contact_changes WHERE ctid IN (
       SELECT ctid FROM contact_changes WHERE changed_at < $1::timestamptz ORDER BY changed_at LIMIT $2::int)`,
    [before, maxRows],
  );
  return rowCount ?? 0;
}
