import { canonicalId } from '../../domain/ids.js';
import { assertMergeAllowed, isRepeatedMerge, type MergeCandidate, type RepeatedMerge } from '../../domain/merge.js';
import type { Row, StatementCache } from './statements.js';

/** Soft-merges `duplicateId` into `survivorId`; runs inside the caller's write transaction. False when a repeated merge was a no-op. */
export function mergeContacts(
  statements: StatementCache,
  ownerId: string,
  duplicateId: string,
  survivorId: string,
  now: string,
  repeat: RepeatedMerge = 'refuse',
): boolean {
  const find = statements.get('SELECT id, is_self, merged_into FROM contacts WHERE owner_id = ? AND id = ?');
  const candidate = (id: string): MergeCandidate | undefined => {
    const canonical = canonicalId(id);
    const row = canonical === null ? undefined : (find.get(ownerId, canonical) as Row | undefined);
    return row && { id: row.id as string, is_self: row.is_self === 1, merged_into: row.merged_into as string | null };
  };
  const duplicate = candidate(duplicateId);
  const survivor = candidate(survivorId);
  if (isRepeatedMerge(duplicate, survivorId) && repeat === 'no-op') return false;
  assertMergeAllowed(duplicateId, survivorId, duplicate, survivor);
  // Contacts merged earlier into the duplicate follow it to the survivor, so chains stay one step long.
  // Two statements, each on its own index: SQLite plans `id = ? OR merged_into = ?` as a scan of the owner's rows.
  statements
    .get('UPDATE contacts SET merged_into = ?, updated_at = ? WHERE owner_id = ? AND merged_into = ?')
    .run(survivor!.id, now, ownerId, duplicate!.id);
  statements
    .get('UPDATE contacts SET merged_into = ?, updated_at = ? WHERE owner_id = ? AND id = ?')
    .run(survivor!.id, now, ownerId, duplicate!.id);
  return true;
}
