import { isUuid } from '../../domain/ids.js';
import type { RecordOrigin } from '../../domain/import-matching.js';
import { parseIsoDateTime } from '../../domain/timestamps.js';
import type { TextChunks } from '../text-chunks.js';
import type { RawRecord } from './raw-record.js';
import { readVcards, splitValue, unescapeValue, type Vcard, type VcardProperty } from './vcard-syntax.js';

interface Candidate {
  property: VcardProperty;
  value: string;
}

type Decode = (property: VcardProperty) => string;

const text: Decode = (property) => unescapeValue(property.value);
/** ORG is organization;unit;…; the company is the organization. */
const organization: Decode = (property) => unescapeValue(splitValue(property.value, ';')[0] ?? '');

/** A card names its contact by its UID alone: unless the import says otherwise, it is matched on nothing else. */
const VCARD: RecordOrigin = { source: 'vcard', matchOn: [] };
/** Properties that describe the card or other properties, not the person: never reported as not imported. */
const CARD_METADATA = new Set([
  'VERSION',
  'PRODID',
  'KIND',
  'SOURCE',
  'NAME',
  'PROFILE',
  'CLIENTPIDMAP',
  'X-ABLABEL',
  'X-ABSHOWAS',
  'X-ABUID',
  'X-ABADR',
]);
/** Properties a contact keeps one of (N only stands in for a missing FN). */
const SINGLE_VALUED = ['FN', 'EMAIL', 'TEL', 'ORG', 'TITLE', 'ADR', 'NOTE', 'BDAY', 'UID', 'REV'];
/** Properties some field reads: any other is reported whole. */
const READ_PROPERTIES = new Set([...CARD_METADATA, ...SINGLE_VALUED, 'N', 'CATEGORIES', 'URL', 'X-SOCIALPROFILE']);

/**
 * vCards (2.1, 3.0, 4.0 as Google and Apple Contacts export them), labelled `card N (line L)`. A record holds
 * only the fields its card has, so importing it over an existing contact keeps that contact's other fields.
 * REV gives updated_at. What a card carries that a contact has no place for is named in `notImported`.
 */
export async function* readVcardRecords(text: TextChunks): AsyncGenerator<RawRecord> {
  for await (const card of readVcards(text)) {
    const fields = cardFields(card);
    const notImported = notImportedOf(card, fields);
    yield notImported.length === 0
      ? { label: card.label, fields, origin: VCARD }
      : { label: card.label, fields, notImported, origin: VCARD };
  }
}

function cardFields(card: Vcard): Record<string, unknown> {
  const fields: Record<string, unknown> = {};
  const set = (field: string, value: string | string[] | undefined): void => {
    if (value !== undefined && value.length > 0) fields[field] = value;
  };
  set('id', uuid(first(card, 'UID', text)));
  set('name', first(card, 'FN', text)?.value ?? first(card, 'N', fullName)?.value);
  set('email', preferred(card, 'EMAIL', text));
  set(
    'phone',
    preferred(card, 'TEL', (property) => text(property).replace(/^tel:/i, '')),
  );
  set('company', first(card, 'ORG', organization)?.value);
  set('title', first(card, 'TITLE', text)?.value);
  set('location', preferred(card, 'ADR', location));
  set('description', first(card, 'NOTE', text)?.value);
  set('birthday', birthday(first(card, 'BDAY', text)));
  set(
    'tags',
    card.properties.filter(({ name }) => name === 'CATEGORIES').flatMap(({ value }) => tags(value)),
  );
  set('linkedin_url', linkedinUrl(card));
  set('updated_at', revision(first(card, 'REV', text)?.value));
  return fields;
}

/** What of the card no field holds, once per kind: unknown properties, extra values, address parts, other URLs. */
function notImportedOf(card: Vcard, fields: Record<string, unknown>): string[] {
  const present = card.properties.filter((property) => property.value.trim() !== '');
  const count = (name: string) => present.filter((property) => property.name === name).length;
  const left = [...new Set(present.map(({ name }) => name).filter((name) => !READ_PROPERTIES.has(name)))];
  left.push(...SINGLE_VALUED.filter((name) => count(name) > 1).map((name) => `${name} (a contact keeps one)`));
  const addressDetail = candidates(card, 'ADR', text).some(({ property }) =>
    [0, 1, 2, 5].some((part) => unescapeValue(splitValue(property.value, ';')[part] ?? '').trim() !== ''),
  );
  if (addressDetail) left.push('ADR street, post office box or postal code (a contact keeps the place)');
  if (
    candidates(card, 'ORG', text).some(({ property }) =>
      splitValue(property.value, ';')
        .slice(1)
        .some((unit) => unit.trim() !== ''),
    )
  ) {
    left.push('ORG department (a contact keeps the organization)');
  }
  const otherUrls = present.filter(({ name }) => name === 'URL' || name === 'X-SOCIALPROFILE').length - (fields.linkedin_url ? 1 : 0);
  if (otherUrls > 0) left.push('URL or X-SOCIALPROFILE other than LinkedIn');
  if (fields.updated_at === undefined && count('REV') > 0) left.push('REV (not a date and time)');
  return left;
}

/** REV as a timestamp: basic (`20240501T093000Z`, a fraction allowed) or extended ISO 8601, or a date (midnight UTC). */
function revision(value: string | undefined): string | undefined {
  const match = /^(\d{4})-?(\d{2})-?(\d{2})(?:T(\d{2}):?(\d{2}):?(\d{2})([.,]\d+)?(Z|[+-]\d{2}(?::?\d{2})?))?$/i.exec(value ?? '');
  if (match === null) return undefined;
  const [, year, month, day, hour = '00', minute = '00', second = '00', fraction = '', zone = 'Z'] = match;
  return parseIsoDateTime(`${year}-${month}-${day}T${hour}:${minute}:${second}${fraction}${zone}`) ?? undefined;
}

/** The card's properties of that name with a non-blank value, in card order. */
function candidates(card: Vcard, name: string, decode: Decode): Candidate[] {
  return card.properties
    .filter((property) => property.name === name)
    .map((property) => ({ property, value: decode(property).trim() }))
    .filter(({ value }) => value !== '');
}

function first(card: Vcard, name: string, decode: Decode): Candidate | undefined {
  return candidates(card, name, decode)[0];
}

/** The most preferred value (lowest PREF, TYPE=pref counting as 1), else the first. */
function preferred(card: Vcard, name: string, decode: Decode): string | undefined {
  return candidates(card, name, decode).reduce<Candidate | undefined>(
    (best, candidate) => (best === undefined || rank(candidate) < rank(best) ? candidate : best),
    undefined,
  )?.value;
}

function rank({ property }: Candidate): number {
  const pref = property.params.get('PREF');
  if (pref !== undefined) return Number.parseInt(pref[0] ?? '', 10) || 1;
  const types = property.params.get('TYPE') ?? [];
  return types.some((type) => type.toLowerCase() === 'pref') ? 1 : Number.POSITIVE_INFINITY;
}

/** N is family;given;additional;prefix;suffix. */
function fullName(property: VcardProperty): string {
  const [family = '', given = ''] = splitValue(property.value, ';').map((part) => unescapeValue(part).trim());
  return [given, family].filter((part) => part !== '').join(' ');
}

/** ADR is po-box;extended;street;locality;region;postal-code;country. */
function location(property: VcardProperty): string {
  const parts = splitValue(property.value, ';').map((part) => unescapeValue(part).trim());
  return [parts[3], parts[4], parts[6]].filter((part) => part !== undefined && part !== '').join(', ');
}

function uuid(candidate: Candidate | undefined): string | undefined {
  const id = candidate?.value.replace(/^urn:uuid:/i, '');
  return id !== undefined && isUuid(id) ? id : undefined;
}

/**
 * `YYYY-MM-DD`, or `--MM-DD` without a year. Apple writes a year-less birthday as the year named by
 * X-APPLE-OMIT-YEAR (1604); other forms are kept as written.
 */
function birthday(candidate: Candidate | undefined): string | undefined {
  if (candidate === undefined) return undefined;
  const { property, value } = candidate;
  if (property.params.get('VALUE')?.[0]?.toLowerCase() === 'text') return value;
  if (/^\d{8}$|^\d{4}-\d{2}-\d{2}$/.test(value)) {
    const digits = value.replaceAll('-', '');
    const monthDay = `${digits.slice(4, 6)}-${digits.slice(6)}`;
    const year = digits.slice(0, 4);
    return year === property.params.get('X-APPLE-OMIT-YEAR')?.[0] ? `--${monthDay}` : `${year}-${monthDay}`;
  }
  if (/^--\d{4}$|^--\d{2}-\d{2}$/.test(value)) {
    const digits = value.slice(2).replace('-', '');
    return `--${digits.slice(0, 2)}-${digits.slice(2)}`;
  }
  return value;
}

function tags(value: string): string[] {
  return splitValue(value, ',')
    .map((tag) => unescapeValue(tag).trim())
    .filter((tag) => tag !== '');
}

function linkedinUrl(card: Vcard): string | undefined {
  return card.properties
    .filter(({ name }) => name === 'URL' || name === 'X-SOCIALPROFILE')
    .map((property) => text(property).trim())
    .find((value) => /linkedin\.com/i.test(value));
}
