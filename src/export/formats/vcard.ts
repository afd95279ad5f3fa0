import type { Contact } from 'contacts-read-api-client';
import type { ExportFormat } from '../export-format.js';

/** RFC 6350: a line SHOULD NOT be longer than 75 octets; a continuation line starts with one space. */
const MAX_LINE_OCTETS = 75;
/** Characters a tel: URI may hold as a global or local number (RFC 3966 visual separators included). */
const TEL_URI_SAFE = /^\+?[0-9][0-9().-]*$/;

/**
 * vCard 4.0 (RFC 6350), one card per contact, which `contacts import` and address books (Apple, Google) read:
 * UID (urn:uuid:<id>), FN and N (name), EMAIL, TEL (phone), ORG (company), TITLE, ADR (location, as the
 * locality), NOTE (description), BDAY (birthday), CATEGORIES (tags), URL (linkedin_url) and REV (updated_at, in
 * ISO 8601 basic format with its milliseconds: `20240501T093000.123Z`).
 *
 * vCard has no place for school, source, enrichment, enriched_at, research_data, researched_at or created_at:
 * those are lost (use csv, json or ndjson to keep every field). Importing the file over the same contacts changes
 * nothing; into an empty network, it gives each contact created_at = updated_at.
 */
export const vcardFormat: ExportFormat = {
  start: '',
  contact: (contact) => vcard(contact),
  end: () => '',
};

function vcard(contact: Contact): string {
  const lines = ['BEGIN:VCARD', 'VERSION:4.0', `UID:urn:uuid:${contact.id}`, `FN:${escapeText(contact.name ?? '')}`];
  const add = (property: string, value: string | null): void => {
    if (value !== null) lines.push(`${property}:${value}`);
  };
  add('N', contact.name === null ? null : structuredName(contact.name));
  add('EMAIL', text(contact.email));
  if (contact.phone !== null) {
    lines.push(TEL_URI_SAFE.test(contact.phone) ? `TEL;VALUE=uri:tel:${contact.phone}` : `TEL;VALUE=text:${escapeText(contact.phone)}`);
  }
  add('ORG', text(contact.company));
  add('TITLE', text(contact.title));
  add('ADR', contact.location === null ? null : `;;;${escapeText(contact.location)};;;`);
  add('NOTE', text(contact.description));
  if (contact.birthday !== null) lines.push(birthday(contact.birthday));
  add('CATEGORIES', contact.tags === null || contact.tags.length === 0 ? null : contact.tags.map(escapeText).join(','));
  add('URL', text(contact.linkedin_url));
  // Milliseconds kept, so a re-import finds updated_at unchanged.
  lines.push(`REV:${contact.updated_at.replace(/[-:]/g, '')}`, 'END:VCARD');
  return lines.map(fold).join('\r\n') + '\r\n';
}

function text(value: string | null): string | null {
  return value === null ? null : escapeText(value);
}

/** RFC 6350 §3.4: backslash, comma and semicolon are escaped, and a line break is written `\n`. */
export function escapeText(value: string): string {
  return value.replace(/[\\,;]/g, (char) => `\\${char}`).replace(/\r\n|\r|\n/g, '\\n');
}

/** N is family;given;additional;prefix;suffix. The name is one string, so the family name is its last word. */
function structuredName(name: string): string {
  const split = name.lastIndexOf(' ');
  const [given, family] = split < 0 ? [name, ''] : [name.slice(0, split), name.slice(split + 1)];
  return `${escapeText(family)};${escapeText(given)};;;`;
}

/** `YYYY-MM-DD` and `--MM-DD` become vCard dates (`YYYYMMDD`, `--MMDD`); any other birthday text stays text. */
function birthday(value: string): string {
  if (/^\d{4}-\d{2}-\d{2}$/.test(value)) return `BDAY:${value.replaceAll('-', '')}`;
  if (/^--\d{2}-\d{2}$/.test(value)) return `BDAY:--${value.slice(2).replace('-', '')}`;
  return `BDAY;VALUE=text:${escapeText(value)}`;
}

/** Folds a content line at 75 octets of UTF-8, never inside a character. */
export function fold(line: string): string {
  if (Buffer.byteLength(line) <= MAX_LINE_OCTETS) return line;
  let folded = '';
  let octets = 0;
  for (const char of line) {
    const size = utf8Length(char.codePointAt(0)!);
    if (octets + size > MAX_LINE_OCTETS) {
      folded += '\r\n ';
      octets = 1;
    }
    folded += char;
    octets += size;
  }
  return folded;
}

function utf8Length(codePoint: number): number {
  return codePoint < 0x80 ? 1 : codePoint < 0x800 ? 2 : codePoint < 0x10000 ? 3 : 4;
}
