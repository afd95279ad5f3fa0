import { CONTACT_FIELDS, contactFieldsOfKind, IMPORTABLE_FIELDS, type ContactInput, type ContactValues } from './contact.js';
import { InputError } from './errors.js';
import { isUuid } from './ids.js';
import { parseIsoDateTime } from './timestamps.js';

export const MAX_TEXT_LENGTH = 65_536;
/** Accepted besides the Contact fields, so data migrated from another system keeps its soft merges. */
const MERGED_INTO = 'merged_into';
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;
type ValueField = keyof ContactValues;
const TEXT_FIELDS = contactFieldsOfKind('text') as ValueField[];
const timestamps = CONTACT_FIELDS.filter((field) => field.kind === 'timestamp');
const NULLABLE_DATE_TIME_FIELDS = timestamps.filter((field) => field.nullable || field.optional).map((field) => field.name as ValueField);
/** Given by the service when the record leaves them out or blank. */
const REQUIRED_DATE_TIME_FIELDS = timestamps.filter((field) => !field.nullable && !field.optional).map((field) => field.name as ValueField);
const OBJECT_FIELDS = contactFieldsOfKind('object') as ValueField[];
const SERVICE_TIMESTAMPS: readonly string[] = REQUIRED_DATE_TIME_FIELDS;

declare const validated: unique symbol;
/** A record normalizeContactInput accepted: what every store can write as it is, without checking again. */
export type ValidContactInput = ContactInput & { readonly [validated]: true };

/**
 * Validates one import record. Fields the record leaves out stay out of `values`; null and blank values
 * are given as null. Throws InputError naming the field; the caller adds where the record is.
 */
export function normalizeContactInput(raw: unknown): ValidContactInput {
  if (!isPlainObject(raw)) throw new InputError('expected an object of contact fields');
  for (const field of Object.keys(raw)) {
    if (!(IMPORTABLE_FIELDS as readonly string[]).includes(field) && field !== MERGED_INTO) {
      throw new InputError(`unknown field "${field}"`);
    }
  }
  const values: Partial<Record<keyof ContactValues, unknown>> = {};
  const given = (field: string): boolean => raw[field] !== undefined;
  for (const field of TEXT_FIELDS) if (given(field)) values[field] = readText(raw, field);
  for (const field of NULLABLE_DATE_TIME_FIELDS) if (given(field)) values[field] = readDateTime(raw, field);
  for (const field of REQUIRED_DATE_TIME_FIELDS) {
    const value = readDateTime(raw, field);
    if (value !== null) values[field] = value;
  }
  for (const field of OBJECT_FIELDS) if (given(field)) values[field] = readObject(raw, field);
  if (given('tags')) values.tags = readTags(raw);
  const input: ContactInput = { id: readId(raw, 'id'), values: values as Partial<ContactValues> };
  const mergedInto = readId(raw, MERGED_INTO);
  if (mergedInto !== null) {
    if (input.id === null) throw new InputError(`field "${MERGED_INTO}" needs the record's "id"`);
    input.mergedInto = mergedInto;
  }
  return input as ValidContactInput;
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function readText(raw: Record<string, unknown>, field: string): string | null {
  const value = raw[field];
  if (value === undefined || value === null) return null;
  if (typeof value !== 'string') throw new InputError(`field "${field}" must be a string or null`);
  if (value.includes('\u0000')) throw new InputError(`field "${field}" must not contain NUL characters`);
  if (LONE_SURROGATE.test(value)) throw new InputError(`field "${field}" must not contain unpaired surrogates`);
  if (value.length > MAX_TEXT_LENGTH) {
    throw new InputError(`field "${field}" is longer than ${MAX_TEXT_LENGTH} characters`);
  }
  const trimmed = value.trim();
  return trimmed === '' ? null : trimmed;
}

function readId(raw: Record<string, unknown>, field: string): string | null {
  const id = readText(raw, field);
  if (id === null) return null;
  if (!isUuid(id)) throw new InputError(`field "${field}" must be a UUID; got "${id}"`);
  return id.toLowerCase();
}

function readDateTime(raw: Record<string, unknown>, field: string): string | null {
  const text = readText(raw, field);
  if (text === null) return null;
  const iso = parseIsoDateTime(text);
  if (iso === null) {
    throw new InputError(`field "${field}" must be an ISO 8601 date-time with a time zone; got "${text}"`);
  }
  return iso;
}

function readObject(raw: Record<string, unknown>, field: string): Record<string, unknown> | null {
  const value = raw[field];
  if (value === null) return null;
  if (!isPlainObject(value)) throw new InputError(`field "${field}" must be an object or null`);
  if (!isStorableJson(value)) {
    throw new InputError(`field "${field}" must not contain NUL characters or unpaired surrogates`);
  }
  return value;
}

/** Every database stores what this accepts: PostgreSQL's jsonb refuses NUL and lone surrogates anywhere. */
function isStorableJson(value: unknown): boolean {
  if (typeof value === 'string') return !value.includes('\u0000') && !LONE_SURROGATE.test(value);
  if (Array.isArray(value)) return value.every(isStorableJson);
  if (typeof value === 'object' && value !== null) {
    return Object.entries(value).every(([key, item]) => isStorableJson(key) && isStorableJson(item));
  }
  return true;
}

function readTags(raw: Record<string, unknown>): string[] | null {
  const value = raw.tags;
  if (value === null) return null;
  if (!Array.isArray(value) || value.some((tag) => typeof tag !== 'string')) {
    throw new InputError('field "tags" must be an array of strings or null');
  }
  const tags = (value as string[]).map((tag) => tag.trim()).filter((tag) => tag.length > 0);
  if (!isStorableJson(tags)) throw new InputError('field "tags" must not contain NUL characters or unpaired surrogates');
  return [...new Set(tags)];
}

/**
 * A record with no id whose every value is null (or an empty tag list), its service timestamps aside, names no
 * contact: an import skips it (a spreadsheet's empty row) rather than creating an empty contact.
 */
export function isEmptyContactInput({ id, values }: ContactInput): boolean {
  return (
    id === null &&
    Object.entries(values).every(
      ([field, value]) => value === null || (Array.isArray(value) && value.length === 0) || SERVICE_TIMESTAMPS.includes(field),
    )
  );
}

/**
 * Refuses an import that names the same contact id twice; only one of them could win. `earlier` holds the ids of the
 * import's records before these, with the label of each.
 */
export function assertUniqueIds(
  records: readonly { label: string; contact: ContactInput }[],
  earlier: ReadonlyMap<string, string> = new Map(),
): void {
  const seen = new Map(earlier);
  for (const { label, contact } of records) {
    if (contact.id === null) continue;
    const first = seen.get(contact.id);
    if (first !== undefined) throw new InputError(`${label}: id ${contact.id} already appears at ${first}`);
    seen.set(contact.id, label);
  }
}
