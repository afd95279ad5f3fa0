import type { Contact } from '../../../domain/contact.js';
import type { RecordOrigin } from '../../../domain/import-matching.js';

/** A column by its exact header, or every column whose header matches (numbered columns: `E-mail 2 - Value`). */
export type ColumnName = string | RegExp;

/** Where one contact field's value comes from in a row of an export. */
export type FieldSource =
  /**
   * The first value among these columns, in the order named (a pattern's columns in header order), that `only`
   * accepts. The columns' other values are reported as not imported, with `leftover` saying why.
   */
  | { first: readonly ColumnName[]; only?: RegExp; leftover?: string }
  /** The columns' values joined with `with` (a name from its parts, a place from city, region and country). */
  | { join: readonly ColumnName[]; with: string }
  /** Tags: the column's values split at `at`, but those in `except` (Google gives every contact `* myContacts`). */
  | { tags: string; at: string; except?: readonly string[] };

/**
 * How the CSV export of another product maps onto contact fields: data, one table per product, read by
 * csv-export-reader.ts. A column no field reads is reported as not imported when a row has a value in it.
 */
export interface CsvExportFormat {
  /** As the import's messages name it. */
  name: string;
  /** Its records' origin: the `source` of the contacts they create, what they are matched on by default. */
  origin: RecordOrigin;
  /** Headers that together say a header row is this export's. */
  signature: readonly string[];
  /** Lines of notes come before the header row (LinkedIn's Connections.csv). */
  notesBeforeHeader?: boolean;
  /** Each field from the first of its sources that gives a value. */
  fields: Partial<Record<keyof Contact, readonly FieldSource[]>>;
  /** Columns that only describe another column (a label, a type): never imported, never reported. */
  describing?: readonly ColumnName[];
  /** A cell holding several values separates them with this (Google: `a ::: b`). */
  valueSeparator?: string;
  /** Per column, values the product writes for "none" (Outlook's `0/0/00` birthday, `Normal` sensitivity). */
  none?: Readonly<Record<string, readonly string[]>>;
}
