import type { Contact } from '../domain/contact.js';
import { CONTACT_COLUMNS, OPTIONAL_COLUMNS, type ContactColumn } from './columns.js';

/** A row as the driver returns it once JSON columns are decoded and timestamps are ISO strings. */
export type ContactRow = Omit<Contact, 'research_data' | 'researched_at'> & {
  research_data: Record<string, unknown> | null;
  researched_at: string | null;
};

/** Drops the two fields the spec shows only when set. */
export function contactFromRow(row: ContactRow): Contact {
  const { research_data, researched_at, ...contact } = row;
  const result: Contact = contact;
  if (research_data !== null) result.research_data = research_data;
  if (researched_at !== null) result.researched_at = researched_at;
  return result;
}

/** A field of a contact's JSON as SQL: its name, and the expression of its value. */
export type JsonPair = readonly [name: ContactColumn, value: string];

/** `'name', value, …`: the argument list of json_object and json_build_object. */
export function namesAndValues(pairs: readonly JsonPair[]): string {
  return pairs.map(([name, value]) => `'${name}', ${value}`).join(', ');
}

/**
 * One SQL expression giving a contact's JSON object with the API's field order, for a dialect's
 * `objectOf(pairs)` (e.g. json_object) and `valueOf(column)`; optional fields appear only when set.
 */
export function contactJsonExpression(
  objectOf: (pairs: readonly JsonPair[]) => string,
  valueOf: (column: ContactColumn) => string,
): string {
  const pair = (column: ContactColumn): JsonPair => [column, valueOf(column)];
  const base = CONTACT_COLUMNS.filter((column) => !OPTIONAL_COLUMNS.includes(column)).map(pair);
  const [data, at] = OPTIONAL_COLUMNS as [ContactColumn, ContactColumn];
  return `CASE
    WHEN ${data} IS NULL AND ${at} IS NULL THEN ${objectOf(base)}
    WHEN ${at} IS NULL THEN ${objectOf([...base, pair(data)])}
    WHEN ${data} IS NULL THEN ${objectOf([...base, pair(at)])}
    ELSE ${objectOf([...base, pair(data), pair(at)])} END`;
}
