import type { Contact, ContactValues } from '../domain/contact.js';

/** Columns a contact row carries for the API, in the Contact schema's order. */
export const CONTACT_COLUMNS = [
  'id',
  'name',
  'email',
  'phone',
  'company',
  'title',
  'school',
  'linkedin_url',
  'location',
  'description',
  'tags',
  'enrichment',
  'enriched_at',
  'source',
  'birthday',
  'created_at',
  'updated_at',
  'research_data',
  'researched_at',
] as const;

/** Columns an import writes: everything in CONTACT_COLUMNS but the id. */
export const CONTACT_VALUE_COLUMNS = CONTACT_COLUMNS.filter(
  (column): column is Exclude<(typeof CONTACT_COLUMNS)[number], 'id'> => column !== 'id',
) satisfies readonly (keyof ContactValues)[];

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

/** How each column is stored, so each dialect can build a contact's JSON in the database. */
export type ColumnKind = 'text' | 'json' | 'timestamp';

export function columnKind(column: ContactColumn): ColumnKind {
  if (column === 'tags' || column === 'enrichment' || column === 'research_data') return 'json';
  if (column.endsWith('_at')) return 'timestamp';
  return 'text';
}

export type ContactColumn = (typeof CONTACT_COLUMNS)[number];

/** Fields the spec shows only when set: the JSON of a contact leaves each out when it is null. */
const OPTIONAL_COLUMNS = ['research_data', 'researched_at'] as const;

/**
 * One SQL expression giving a contact's JSON object with the API's field order, for a dialect's
 * `objectOf(pairs)` (e.g. json_object) and `valueOf(column)`; optional fields appear only when set.
 */
export function contactJsonExpression(objectOf: (pairs: string[]) => string, valueOf: (column: ContactColumn) => string): string {
  const pair = (column: ContactColumn) => `'${column}', ${valueOf(column)}`;
  const base = CONTACT_COLUMNS.filter((column) => !(OPTIONAL_COLUMNS as readonly string[]).includes(column)).map(pair);
  const [data, at] = OPTIONAL_COLUMNS;
  return `CASE
    WHEN ${data} IS NULL AND ${at} IS NULL THEN ${objectOf(base)}
    WHEN ${at} IS NULL THEN ${objectOf([...base, pair(data)])}
    WHEN ${data} IS NULL THEN ${objectOf([...base, pair(at)])}
    ELSE ${objectOf([...base, pair(data), pair(at)])} END`;
}
