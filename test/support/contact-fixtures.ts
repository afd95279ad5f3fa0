import { CONTACT_FIELDS, type Contact, type ContactField, type ContactFieldKind, type ContactValues } from '../../src/domain/contact.js';

// Every fixture here is read from CONTACT_FIELDS: a field added to the contact is in each of them without a test edit.

type ValueKind = Exclude<ContactFieldKind, 'id'>;
type NullWhereNullable<T> = { [F in keyof T as null extends T[F] ? F : never]-?: null };

/** The names of the fields every listed contact carries; the optional ones appear only when set. */
export const ALWAYS_LISTED_FIELDS = CONTACT_FIELDS.filter((field) => !field.optional).map((field) => field.name);

/** The fields a listed contact shows as null when they have no value. */
export const LISTED_NULLS = nullsFor(CONTACT_FIELDS.filter((field) => field.nullable)) as NullWhereNullable<Contact>;

/** Every value a record may leave out, null: what an insert stores for each field the record does not name. */
export const NULL_VALUES = nullsFor(CONTACT_FIELDS.filter((field) => field.nullable || field.optional)) as NullWhereNullable<ContactValues>;

const SAMPLE_OF_KIND: Record<ValueKind, (name: string, index: number) => unknown> = {
  text: (name) => `${name} of Ada`,
  tags: (name) => [`${name} one`, `${name} two`],
  object: (name, index) => ({ [name]: { index } }),
  timestamp: (_name, index) => new Date(Date.UTC(2024, 0, 1 + index)).toISOString(),
};

/**
 * A value for every field but `id`, fit for its kind and unlike any other field's, already as an import normalizes it: a
 * round trip gives it back unchanged, and a value that lands in another field's column shows.
 */
export const EVERY_FIELD_VALUES = Object.fromEntries(
  CONTACT_FIELDS.filter((field): field is ContactField & { kind: ValueKind } => field.kind !== 'id').map((field, index) => [
    field.name,
    SAMPLE_OF_KIND[field.kind](field.name, index),
  ]),
) as ContactValues;

function nullsFor(fields: readonly ContactField[]): Record<string, null> {
  return Object.fromEntries(fields.map((field) => [field.name, null]));
}
