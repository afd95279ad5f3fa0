import { CONTACT_FIELDS, type ContactFieldKind, type ContactValues } from '../domain/contact.js';
import type { Dialect } from './contracts/dialect.js';

/** The users columns a User carries. */
export const USER_COLUMNS = ['id', 'email', 'name', 'plan', 'created_at'] as const;
/** The api_keys columns an ApiKeyRecord carries (never the secret's hash). */
export const KEY_COLUMNS = [
  'id',
  'owner_id',
  'start',
  'label',
  'scopes',
  'created_at',
  'expires_at',
  'last_used_at',
  'revoked_at',
] as const;

/** The select list of a UserWithKeyCount, from `users` aliased `u`: the key count reads the api_keys_owner index. */
export function userWithKeyCountList(dialect: Dialect): string {
  return `${columnList(USER_COLUMNS, 'u')}, ${dialect.countAsNumber('(SELECT count(*) FROM api_keys k WHERE k.owner_id = u.id)')} AS keys`;
}

/** `a, b`, or `t.a, t.b` with an alias: for a select list. */
export function columnList(columns: readonly string[], alias?: string): string {
  return columns.map((column) => (alias === undefined ? column : `${alias}.${column}`)).join(', ');
}

/** A contacts column the API shows: one per field of ContactSchema, named and ordered as the field. */
export type ContactColumn = (typeof CONTACT_FIELDS)[number]['name'];
/** A column an import writes: every contact column but the id. */
export type ContactValueColumn = keyof ContactValues;

/** How each column is stored, so each dialect can build a contact's JSON in the database. */
export type ColumnKind = 'text' | 'json' | 'timestamp';

const STORAGE: Record<ContactFieldKind, ColumnKind> = {
  id: 'text',
  text: 'text',
  tags: 'json',
  object: 'json',
  timestamp: 'timestamp',
};

/** The contact column table: every list of columns and their kinds derive from it. */
const CONTACT_COLUMN_TABLE = CONTACT_FIELDS.map((field) => ({ name: field.name, kind: STORAGE[field.kind] }));

export const CONTACT_COLUMNS: readonly ContactColumn[] = CONTACT_COLUMN_TABLE.map((column) => column.name);

export const CONTACT_VALUE_COLUMNS: readonly ContactValueColumn[] = CONTACT_COLUMNS.filter(
  (column): column is ContactValueColumn => column !== 'id',
);

const byName = new Map(CONTACT_COLUMN_TABLE.map((column) => [column.name, column]));

export function columnKind(column: ContactColumn): ColumnKind {
  return byName.get(column)!.kind;
}

/** Columns SQLite keeps as JSON text. */
export const JSON_COLUMNS: ReadonlySet<ContactColumn> = new Set(CONTACT_COLUMNS.filter((column) => columnKind(column) === 'json'));

/** A new contact's values before the record's own: null in every column that may be null. */
export const EMPTY_CONTACT_VALUES = Object.fromEntries(
  CONTACT_FIELDS.filter((field) => field.nullable || field.optional).map((field) => [field.name, null]),
) as Omit<ContactValues, 'created_at' | 'updated_at'>;

/** Columns the API shows only when set: the JSON of a contact leaves each out when it is null. */
export const OPTIONAL_COLUMNS: readonly ContactColumn[] = CONTACT_FIELDS.filter((field) => field.optional).map((field) => field.name);
