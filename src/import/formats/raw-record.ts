import { InputError } from '../../domain/errors.js';
import type { RecordOrigin } from '../../domain/import-matching.js';

/** One contact as a file gives it, before validation, with where it is in the file (`line 4`, `record 2`). */
export interface RawRecord {
  label: string;
  fields: Record<string, unknown>;
  /** What the record carries that no contact field holds (vCard: `PHOTO`, `EMAIL (a contact keeps one)`). */
  notImported?: string[];
  /** The export it was read from, when its format is another product's (a LinkedIn Connections.csv, a vCard). */
  origin?: RecordOrigin;
}

/** The value as a record's fields; JSON formats can hold anything where a contact object belongs. */
export function asFields(value: unknown, label: string): Record<string, unknown> {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new InputError(`${label}: expected an object of contact fields`);
  }
  return value as Record<string, unknown>;
}
