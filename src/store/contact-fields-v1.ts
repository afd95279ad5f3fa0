import type { ContactFieldKind } from '../domain/contact.js';

/** A contact field as a migration was written with it: its column, how it holds its value, whether it shows only when set. */
export interface MigrationContactField {
  readonly name: string;
  readonly kind: ContactFieldKind;
  readonly optional: boolean;
}

/**
 * The contact's fields, in the API's order, as migration 1 created their columns on both databases and as SQLite's
 * migration 5 and PostgreSQL's migrations 5 and 8 built a contact's stored JSON from them. A copy of what
 * CONTACT_FIELDS held then, so that a field added to Contact rewrites no migration that has shipped. Never edit it:
 * a new field comes with a new migration per database and a list of its own (src/store/README.md).
 */
export const CONTACT_FIELDS_V1: readonly MigrationContactField[] = [
  { name: 'id', kind: 'id', optional: false },
  { name: 'name', kind: 'text', optional: false },
  { name: 'email', kind: 'text', optional: false },
  { name: 'phone', kind: 'text', optional: false },
  { name: 'company', kind: 'text', optional: false },
  { name: 'title', kind: 'text', optional: false },
  { name: 'school', kind: 'text', optional: false },
  { name: 'linkedin_url', kind: 'text', optional: false },
  { name: 'location', kind: 'text', optional: false },
  { name: 'description', kind: 'text', optional: false },
  { name: 'tags', kind: 'tags', optional: false },
  { name: 'enrichment', kind: 'object', optional: false },
  { name: 'enriched_at', kind: 'timestamp', optional: false },
  { name: 'source', kind: 'text', optional: false },
  { name: 'birthday', kind: 'text', optional: false },
  { name: 'created_at', kind: 'timestamp', optional: false },
  { name: 'updated_at', kind: 'timestamp', optional: false },
  { name: 'research_data', kind: 'object', optional: true },
  { name: 'researched_at', kind: 'timestamp', optional: true },
];

/** Their columns, in the same order. */
export const CONTACT_COLUMNS_V1: readonly string[] = CONTACT_FIELDS_V1.map((field) => field.name);
