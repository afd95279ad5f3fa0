import type { Contact } from 'contacts-read-api-client';
import { IMPORTABLE_FIELDS } from '../../domain/contact.js';
import type { ExportFormat } from './format.js';

/** The columns `contacts import` reads, in its order: every field of a contact. */
const COLUMNS: readonly (keyof Contact)[] = IMPORTABLE_FIELDS;

/**
 * RFC 4180 CSV (CRLF rows) with a header row of the API's field names: what `contacts import` reads back.
 * Null is an empty cell, `tags` are joined with `;`, `enrichment` and `research_data` are JSON text. A tag list
 * that joining would not give back (empty, a tag holding `;`, or text starting with `[`) is a JSON array instead.
 */
export const csvFormat: ExportFormat = {
  start: `${COLUMNS.join(',')}\r\n`,
  contact: (contact) => `${COLUMNS.map((column) => quote(cellText(contact, column))).join(',')}\r\n`,
  end: () => '',
};

function cellText(contact: Contact, column: keyof Contact): string {
  const value = contact[column];
  if (value === null || value === undefined) return '';
  if (column === 'tags') return tagsCell(value as string[]);
  return typeof value === 'object' ? JSON.stringify(value) : String(value);
}

/** Quotes a cell when it holds a delimiter, a quote or a line break, or when the reader's trimming would change it. */
function quote(text: string): string {
  return /[",\r\n]|^\s|\s$/.test(text) ? `"${text.replaceAll('"', '""')}"` : text;
}

function tagsCell(tags: readonly string[]): string {
  const joined = tags.join(';');
  return tags.length === 0 || tags.some((tag) => tag.includes(';')) || joined.startsWith('[') ? JSON.stringify(tags) : joined;
}
