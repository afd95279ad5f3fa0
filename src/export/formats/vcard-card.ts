import type { Contact } from 'contacts-read-api-client';

/** The vCard versions we write: 4.0 for the export (RFC 6350), 3.0 for CardDAV (RFC 2426, what Apple reads best). */
export type VcardVersion = '3.0' | '4.0';

/** RFC 6350 and RFC 2426: a line SHOULD NOT be longer than 75 octets; a continuation line starts with one space. */
const MAX_LINE_OCTETS = 75;
/** Characters a tel: URI may hold as a global or local number (RFC 3966 visual separators included). */
const TEL_URI_SAFE = /^\+?[0-9][0-9().-]*$/;
const FULL_DATE = /^\d{4}-\d{2}-\d{2}$/;
const YEARLESS_DATE = /^--\d{2}-\d{2}$/;

/** Where the versions differ: the rest of the mapping (which field goes in which property, in which order) is one. */
interface VersionRules {
  uid(id: string): string;
  /** N when the contact has no name: 3.0 requires N, 4.0 leaves it out. */
  emptyName: string | null;
  email(email: string): string;
  phone(phone: string): string;
  birthday(birthday: string): string | null;
  rev(updatedAt: string): string;
}

const RULES: Record<VcardVersion, VersionRules> = {
  '4.0': {
    uid: (id) => `UID:urn:uuid:${id}`,
    emptyName: null,
    email: (email) => `EMAIL:${escapeText(email)}`,
    phone: (phone) => (TEL_URI_SAFE.test(phone) ? `TEL;VALUE=uri:tel:${phone}` : `TEL;VALUE=text:${escapeText(phone)}`),
    // `YYYY-MM-DD` and `--MM-DD` become vCard dates (`YYYYMMDD`, `--MMDD`); any other birthday text stays text.
    birthday: (value) => {
      if (FULL_DATE.test(value)) return `BDAY:${value.replaceAll('-', '')}`;
      if (YEARLESS_DATE.test(value)) return `BDAY:--${value.slice(2).replace('-', '')}`;
      return `BDAY;VALUE=text:${escapeText(value)}`;
    },
    // Milliseconds kept, so a re-import finds updated_at unchanged.
    rev: (updatedAt) => `REV:${updatedAt.replace(/[-:]/g, '')}`,
  },
  '3.0': {
    uid: (id) => `UID:${id}`,
    emptyName: 'N:;;;;',
    email: (email) => `EMAIL;TYPE=INTERNET:${escapeText(email)}`,
    // The phone as given: 3.0 has no tel: URI, and the kind of number is not known.
    phone: (phone) => `TEL;TYPE=VOICE:${escapeText(phone)}`,
    // 3.0 has no year-less date and no text birthday: Apple's convention marks the year 1604 as "no year".
    birthday: (value) => {
      if (FULL_DATE.test(value)) return `BDAY;VALUE=date:${value}`;
      if (YEARLESS_DATE.test(value)) return `BDAY;X-APPLE-OMIT-YEAR=1604;VALUE=date:1604${value.slice(1)}`;
      return null;
    },
    // ISO 8601 basic form to the second, as RFC 2426's examples write it.
    rev: (updatedAt) => `REV:${updatedAt.replace(/[-:]/g, '').replace(/\.\d+Z$/, 'Z')}`,
  },
};

/**
 * One contact as a vCard of the given version, CRLF line ends and folded at 75 octets: UID (the contact's id), FN and N
 * (name), EMAIL, TEL (phone), ORG (company), TITLE, ADR (location, as the locality), NOTE (description), BDAY
 * (birthday), CATEGORIES (tags), URL (linkedin_url) and REV (updated_at). vCard has no place for school, source,
 * enrichment, enriched_at, research_data, researched_at or created_at.
 */
export function vcardCard(contact: Contact, version: VcardVersion): string {
  const rules = RULES[version];
  const lines = ['BEGIN:VCARD', `VERSION:${version}`, rules.uid(contact.id), `FN:${escapeText(contact.name ?? '')}`];
  const add = (line: string | null): void => {
    if (line !== null) lines.push(line);
  };
  const property = (name: string, value: string | null): string | null => (value === null ? null : `${name}:${escapeText(value)}`);
  add(contact.name === null ? rules.emptyName : `N:${structuredName(contact.name)}`);
  add(contact.email === null ? null : rules.email(contact.email));
  add(contact.phone === null ? null : rules.phone(contact.phone));
  add(property('ORG', contact.company));
  add(property('TITLE', contact.title));
  add(contact.location === null ? null : `ADR:;;;${escapeText(contact.location)};;;`);
  add(property('NOTE', contact.description));
  add(contact.birthday === null ? null : rules.birthday(contact.birthday));
  add(contact.tags === null || contact.tags.length === 0 ? null : `CATEGORIES:${contact.tags.map(escapeText).join(',')}`);
  add(property('URL', contact.linkedin_url));
  lines.push(rules.rev(contact.updated_at), 'END:VCARD');
  return lines.map(fold).join('\r\n') + '\r\n';
}

/** RFC 6350 §3.4 (and RFC 2426 §4): backslash, comma and semicolon are escaped, and a line break is written `\n`. */
export function escapeText(value: string): string {
  return value.replace(/[\\,;]/g, (char) => `\\${char}`).replace(/\r\n|\r|\n/g, '\\n');
}

/** N is family;given;additional;prefix;suffix. The name is one string, so the family name is its last word. */
function structuredName(name: string): string {
  const split = name.lastIndexOf(' ');
  const [given, family] = split < 0 ? [name, ''] : [name.slice(0, split), name.slice(split + 1)];
  return `${escapeText(family)};${escapeText(given)};;;`;
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
