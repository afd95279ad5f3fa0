import type { ContactFieldKind } from '../../../domain/contact.js';
import { CONTACT_FIELDS_V1, type MigrationContactField } from '../../contact-fields-v1.js';
import { contactJsonExpression, namesAndValues } from '../../contact-row.js';

/** The API's canonical date-time: ISO 8601 UTC with milliseconds (microseconds truncated, as parseTimestamptz does). */
const isoMillis = (column: string) => `to_char(${column} AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`;

/** A contact's JSON as the API shows it, from the function parameters named after its columns (migration 5). */
export const CONTACT_API_JSON = contactJsonExpression(
  CONTACT_FIELDS_V1,
  (pairs) => `json_build_object(${namesAndValues(pairs)})`,
  ({ name, kind }) => (kind === 'timestamp' ? isoMillis(name) : name),
);

/** The column type of each kind of field, as migration 1 created them. */
export const TYPES_OF_MIGRATION_1: Readonly<Record<ContactFieldKind, string>> = {
  id: 'uuid',
  text: 'text',
  tags: 'text[]',
  object: 'jsonb',
  timestamp: 'timestamptz',
};
/** Free-form objects: jsonb until migration 8, json (the text as written) since. */
export const TYPES_OF_MIGRATION_8 = { ...TYPES_OF_MIGRATION_1, object: 'json' };
export const OBJECT_COLUMNS_V1 = CONTACT_FIELDS_V1.filter(({ kind }) => kind === 'object').map(({ name }) => name);
/** The parameters of contacts_api_json, named and typed after the columns. */
export const apiJsonParameters = (fields: readonly MigrationContactField[], types: Readonly<Record<ContactFieldKind, string>>) =>
  fields.map(({ name, kind }) => `${name} ${types[kind]}`).join(', ');

/** A contact's value as JSON text: strings and arrays through to_json, objects as stored, `null` when NULL. */
function jsonTextOf({ name, kind }: MigrationContactField): string {
  if (kind === 'object') return `coalesce(${name}::text, 'null')`;
  return `coalesce(to_json(${kind === 'timestamp' ? isoMillis(name) : name})::text, 'null')`;
}

/**
 * A contact's JSON as the API shows it, byte for byte as SQLite's json_object writes it (migration 8): no space
 * between tokens, strings escaped by to_json as SQLite escapes them, objects as written. json_build_object puts
 * ` : ` and `, ` between members.
 */
export const COMPACT_CONTACT_API_JSON = contactJsonExpression(
  CONTACT_FIELDS_V1,
  (pairs) => `'{' || ${pairs.map(([name, value], index) => `'${index === 0 ? '' : ','}"${name}":' || ${value}`).join(' || ')} || '}'`,
  jsonTextOf,
);
