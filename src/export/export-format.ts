import { csvFormat } from './formats/csv.js';
import type { ExportFormat } from './formats/format.js';
import { jsonFormat, ndjsonFormat } from './formats/json.js';
import { vcardFormat } from './formats/vcard.js';

export const EXPORT_FORMATS = {
  ndjson: ndjsonFormat,
  json: jsonFormat,
  csv: csvFormat,
  vcf: vcardFormat,
} as const satisfies Record<string, ExportFormat>;

export type ExportFormatName = keyof typeof EXPORT_FORMATS;

export const EXPORT_FORMAT_NAMES = Object.keys(EXPORT_FORMATS) as ExportFormatName[];
