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
