import type { Contact } from 'contacts-read-api-client';
import { csvFormat } from './formats/csv.js';
import { jsonFormat, ndjsonFormat } from './formats/json.js';
import { vcardFormat } from './formats/vcard.js';

/** How contacts are written as text, one contact at a time, so an export of any size streams. */
export interface ExportFormat {
  /** Text before the first contact. */
  start: string;
  /** The text of one contact; `index` counts from 0. */
  contact(contact: Contact, index: number): string;
  /** Text after the last contact, given how many were written. */
  end(count: number): string;
}

export const EXPORT_FORMATS = {
  ndjson: ndjsonFormat,
  json: jsonFormat,
  csv: csvFormat,
  vcf: vcardFormat,
} as const satisfies Record<string, ExportFormat>;

export type ExportFormatName = keyof typeof EXPORT_FORMATS;

export const EXPORT_FORMAT_NAMES = Object.keys(EXPORT_FORMATS) as ExportFormatName[];
