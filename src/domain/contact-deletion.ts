import { InputError, NotFoundError } from './errors.js';
import { canonicalId } from './ids.js';

/** The ids to delete, canonical and each once; a malformed one is no contact of the user (NotFoundError naming it). */
export function idsToDelete(ids: readonly string[]): string[] {
  if (ids.length === 0) throw new InputError('Name at least one contact id to delete');
  return [
    ...new Set(
      ids.map((id) => {
        const canonical = canonicalId(id);
        if (canonical === null) throw new NotFoundError(`Contact ${id} is not one of this user's contacts`);
        return canonical;
      }),
    ),
  ];
}

/** Refuses the deletion (NotFoundError) when any id asked for is not one of the owner's contacts (the self row is not). */
export function assertAllOwned(ids: readonly string[], owned: ReadonlySet<string>): void {
  const missing = ids.find((id) => !owned.has(id));
  if (missing !== undefined) throw new NotFoundError(`Contact ${missing} is not one of this user's contacts`);
}
