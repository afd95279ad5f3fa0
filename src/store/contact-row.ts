import type { Contact, ContactValues } from '../domain/contact.js';
import { CONTACT_COLUMNS, OPTIONAL_COLUMNS, type ContactColumn } from './columns.js';

/**
 * A row as the driver returns it once JSON columns are decoded and timestamps are ISO strings: a field the spec
 * shows only when set is null when unset.
 */
export type ContactRow = Pick<Contact, 'id'> & ContactValues;

const SHOWN_ONLY_WHEN_SET: ReadonlySet<ContactColumn> = new Set(OPTIONAL_COLUMNS);

/** The contact the API shows: the row's fields in column order, those shown only when set left out when null. */
export function contactFromRow(row: ContactRow): Contact {
  const contact: Partial<Record<ContactColumn, unknown>> = {};
  for (const column of CONTACT_COLUMNS) {
    if (row[column] !== null || !SHOWN_ONLY_WHEN_SET.has(column)) contact[column] = row[column];
  }
  return contact as Contact;
}

/** A field of a contact's JSON as SQL: its name, and the expression of its value. */
export type JsonPair = readonly [name: string, value: string];

/** `'name', value, …`: the argument list of json_object and json_build_object. */
export function namesAndValues(pairs: readonly JsonPair[]): string {
  return pairs.map(([name, value]) => `'${name}', ${value}`).join(', ');
}

/**
 * One SQL expression giving a contact's JSON object with the fields of `fields` in their order, for a dialect's
 * `objectOf(pairs)` (e.g. json_object) and `valueOf(field)`; optional fields appear only when set. A migration passes
 * the field list it was written with, never the live one, so that its SQL stays as released. One branch per set of
 * optional fields that are set: the first branch whose optional fields left out are all NULL is the row's.
 */
export function contactJsonExpression<Field extends { readonly name: string; readonly optional: boolean }>(
  fields: readonly Field[],
  objectOf: (pairs: readonly JsonPair[]) => string,
  valueOf: (field: Field) => string,
): string {
  const optional = fields.filter((field) => field.optional);
  const branches = Array.from({ length: 2 ** optional.length }, (_, setBits) => {
    const left = optional.filter((_field, index) => (setBits & (1 << index)) === 0);
    const object = objectOf(fields.filter((field) => !left.includes(field)).map((field) => [field.name, valueOf(field)]));
    return left.length === 0 ? object : `WHEN ${left.map((field) => `${field.name} IS NULL`).join(' AND ')} THEN ${object}`;
  });
  if (branches.length === 1) return branches[0]!;
  return `CASE${branches.map((branch, index) => `\n    ${index === branches.length - 1 ? 'ELSE ' : ''}${branch}`).join('')} END`;
}
