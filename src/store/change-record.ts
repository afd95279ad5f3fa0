import type { ChangeLogState, ChangePosition } from '../domain/changes.js';
import type { ChangeRecord } from './contracts/contact-store.js';

/** Past every contact id in a seq: a position with no `after` reads from the next seq on. */
export const AFTER_EVERY_ID = 'ffffffff-ffff-ffff-ffff-ffffffffffff';

/** A change-log row joined with its contact as it is now (absent when deleted), and a merged one's survivor. */
export interface ChangeRow {
  contact_id: string;
  seq: number | string;
  changed_at: string;
  /** The name the contact had when it was deleted (migration 15); null for changes recorded otherwise. */
  deleted_name: string | null;
  contact_owner: string | null;
  is_self: boolean | number | null;
  merged_into: string | null;
  name: string | null;
  merged_into_name: string | null;
  api_json: string | null;
}

/**
 * What the change of `row` tells a client about the contact now: gone unless it is still the owner's and not the self
 * row. A gone contact is named as it was when deleted, or as it is while still the owner's (the self row); a contact
 * now another owner's is never named from that owner's row.
 */
export function changeRecord(ownerId: string, row: ChangeRow): ChangeRecord {
  const base = { contactId: row.contact_id, seq: Number(row.seq), changedAt: row.changed_at };
  if (row.contact_owner !== ownerId || row.is_self === true || row.is_self === 1) {
    const name = row.contact_owner === null ? row.deleted_name : row.contact_owner === ownerId ? row.name : null;
    return { ...base, state: { kind: 'gone', name } };
  }
  if (row.merged_into !== null) {
    return { ...base, state: { kind: 'merged', mergedInto: row.merged_into, name: row.name, mergedIntoName: row.merged_into_name } };
  }
  return { ...base, state: { kind: 'listable', json: row.api_json! } };
}

/**
 * Where a replay from a time starts: just before `firstSeq`, the first seq holding a change at or after the time, so
 * reading after it gives every contact changed since (and any whose change committed later though it was stamped a
 * little before); the log's current position when nothing changed since.
 */
export function positionBefore(firstSeq: number | null, log: ChangeLogState): ChangePosition {
  return { seq: firstSeq === null ? log.currentSeq : firstSeq - 1, after: null };
}
