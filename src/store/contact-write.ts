import type { ContactValues } from '../domain/contact.js';
import { InputError } from '../domain/errors.js';
import { newId } from '../domain/ids.js';
import { CONTACT_VALUE_COLUMNS, EMPTY_CONTACT_VALUES, type ContactValueColumn } from './columns.js';
import type { ImportRecord } from './contracts/contact-store.js';

/** What an import needs to know of a contact that already has the record's id, whoever owns it. */
export interface ExistingContact {
  owner_id: string;
  is_self: boolean;
}

/**
 * An update writes only when the stored contact differs from `values` in one of the `compared` columns, the fields
 * the record names besides updated_at: a re-import of what is stored writes nothing, and the change log records
 * nothing. When it writes, updated_at becomes the record's, unless that is the stored one (a file exported before
 * the edit): then, as without one, it becomes the import's time.
 */
export type ContactWrite =
  | { kind: 'insert'; id: string; values: ContactValues }
  | {
      kind: 'update';
      id: string;
      values: Partial<ContactValues> & Pick<ContactValues, 'updated_at'>;
      compared: readonly ContactValueColumn[];
    };

/**
 * Decides how one import record is written: a new contact, or an update of the owner's contact with
 * the same id that changes only the fields the record names. Refuses ids of another owner or of the self row.
 * A new contact's `source` is the record's origin's unless the record names one; an update leaves it, so a
 * re-import, or an export of ours read back, changes no contact's source.
 */
export function decideContactWrite(
  ownerId: string,
  record: ImportRecord,
  existing: ExistingContact | undefined,
  now: string,
): ContactWrite {
  const { id, values } = record.contact;
  if (existing === undefined) {
    const updatedAt = values.updated_at ?? now;
    return {
      kind: 'insert',
      id: id ?? newId(),
      // A record that says when it last changed but not when it was made was made no later than that.
      values: {
        ...EMPTY_CONTACT_VALUES,
        source: record.origin?.source ?? null,
        ...values,
        created_at: values.created_at ?? (updatedAt < now ? updatedAt : now),
        updated_at: updatedAt,
      },
    };
  }
  if (existing.owner_id !== ownerId || existing.is_self) {
    throw new InputError(`${record.label}: id ${id} is not one of this user's importable contacts`);
  }
  return {
    kind: 'update',
    id: id!,
    values: { ...values, updated_at: values.updated_at ?? now },
    compared: CONTACT_VALUE_COLUMNS.filter((column) => column in values && column !== 'updated_at'),
  };
}
