import type pg from 'pg';
import { canonicalId } from '../../domain/ids.js';
import { assertMergeAllowed, isRepeatedMerge, type MergeCandidate, type RepeatedMerge } from '../../domain/merge.js';

const MERGE_CANDIDATE_SQL = 'SELECT id, is_self, merged_into FROM contacts WHERE owner_id = $1::uuid AND id = $2::uuid FOR UPDATE';

/**
 * Soft-merges `duplicateId` into `survivorId` within the caller's transaction, which holds the owner's listing row.
 * False when a repeated merge was a no-op.
 */
export async function mergeContacts(
  client: pg.PoolClient,
  ownerId: string,
  duplicateId: string,
  survivorId: string,
  now: string,
  repeat: RepeatedMerge = 'refuse',
): Promise<boolean> {
  const found = new Map<string, MergeCandidate>();
  // Locked in id order, so two merges of the same pair in opposite directions cannot deadlock.
  const ids = [...new Set([duplicateId, survivorId].map(canonicalId).filter((id) => id !== null))].sort();
  for (const id of canonicalId(ownerId) !== null ? ids : []) {
    const { rows } = await client.query<MergeCandidate>(MERGE_CANDIDATE_SQL, [ownerId, id]);
    if (rows[0]) found.set(id, rows[0]);
  }
  const candidate = (id: string): MergeCandidate | undefined => found.get(canonicalId(id) ?? '');
  const duplicate = candidate(duplicateId);
  const survivor = candidate(survivorId);
  if (isRepeatedMerge(duplicate, survivorId) && repeat === 'no-op') return false;
  assertMergeAllowed(duplicateId, survivorId, duplicate, survivor);
  // Contacts merged earlier into the duplicate follow it to the survivor, so chains stay one step long.
  await client.query(
    `UPDATE contacts SET merged_into = $1::uuid, updated_at = $2::timestamptz
     WHERE owner_id = $3::uuid AND (id = $4::uuid OR merged_into = $4::uuid)`,
    [survivor!.id, now, ownerId, duplicate!.id],
  );
  return true;
}
