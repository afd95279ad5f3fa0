import { InputError, NotFoundError } from './errors.js';

/** What the merge rule needs to know of a contact, read within the owner's scope. */
export interface MergeCandidate {
  id: string;
  is_self: boolean;
  merged_into: string | null;
}

/**
 * Soft-merging marks `duplicate` as merged into `survivor`. Both must be listable contacts of the
 * same owner (NotFoundError otherwise; InputError for the self row or a merged contact); the lookups that produced the
 * candidates were owner-scoped, so another owner's contact is absent.
 */
export function assertMergeAllowed(
  duplicateId: string,
  survivorId: string,
  duplicate: MergeCandidate | undefined,
  survivor: MergeCandidate | undefined,
): void {
  if (duplicateId.toLowerCase() === survivorId.toLowerCase()) throw new InputError('A contact cannot be merged into itself');
  assertListable(duplicateId, duplicate, 'merged');
  assertListable(survivorId, survivor, 'merged into');
}

function assertListable(id: string, contact: MergeCandidate | undefined, role: string): void {
  if (!contact) throw new NotFoundError(`Contact ${id} is not one of this user's contacts`);
  if (contact.is_self) throw new InputError(`Contact ${id} is the user's own self contact and cannot be ${role}`);
  if (contact.merged_into !== null) {
    throw new InputError(`Contact ${id} is already merged into ${contact.merged_into} and cannot be ${role}`);
  }
}

/** What merging a duplicate into the contact it is already merged into means: refused, or nothing to do (re-imports). */
export type RepeatedMerge = 'refuse' | 'no-op';

export function isRepeatedMerge(duplicate: MergeCandidate | undefined, survivorId: string): boolean {
  return duplicate?.merged_into === survivorId.toLowerCase();
}

/** A merge an import record asks for, refused: the record is bad input, named by its label. */
export function refusedRecordMerge(label: string, error: unknown): unknown {
  return error instanceof InputError || error instanceof NotFoundError ? new InputError(`${label}: ${error.message}`) : error;
}
