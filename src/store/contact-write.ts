import type { ContactValues } from '../domain/contact.js';
import { InputError } from '../domain/errors.js';
import { newId } from '../domain/ids.js';
import { EMPTY_CONTACT_VALUES } from './columns.js';
import type { ImportRecord } from './store.js';

/** What an import needs to know of a contact that already has the record's id, whoever owns it. */
export interface ExistingContact {
  owner_id: string;
  is_self: boolean;
}

export type ContactWrite =
  { kind: 'insert'; id: string; values: ContactValues } | { kind: 'update'; id: string; values: Partial<ContactValues> };

/**
 * Decides how one import record is written: a new contact, or an update of the owner's contact with
 * the same id that changes only the fields the record names. Refuses ids of another owner or of the self row.
 */
export function decideContactWrite(
  ownerId: string,
  record: ImportRecord,
  existing: ExistingContact | undefined,
  now: string,
): ContactWrite {
  const { id, values } = record.contact;
  if (existing === undefined) {
    return {
      kind: 'insert',
      id: id ?? newId(),
      values: { ...EMPTY_CONTACT_VALUES, ...values, created_at: values.created_at ?? now, updated_at: values.updated_at ?? now },
    };
  }
  if (existing.owner_id !== ownerId || existing.is_self) {
    throw new InputError(`${record.label}: id ${id} is not one of this user's importable contacts`);
  }
  return { kind: 'update', id: id!, values: { ...values, updated_at: values.updated_at ?? now } };
}
