import type { Contact } from 'contacts-read-api-client';
import { InputError } from '../domain/errors.js';
import { DavError } from './dav-error.js';
import { carddav } from './multistatus.js';
import { CARDDAV_NS } from './namespaces.js';
import { childOf, isElement, type XmlElement } from './xml-reading.js';

/** Whether a contact's card matches an addressbook-query's filter. */
export type ContactFilter = (contact: Contact) => boolean;

/** The card properties a filter may test, as the values the card writer gives them (vcard-card.ts). */
const PROPERTY_VALUES: Record<string, (contact: Contact) => readonly string[]> = {
  FN: (contact) => [contact.name ?? ''],
  EMAIL: (contact) => present(contact.email),
  TEL: (contact) => present(contact.phone),
  ORG: (contact) => present(contact.company),
  TITLE: (contact) => present(contact.title),
  NOTE: (contact) => present(contact.description),
  URL: (contact) => present(contact.linkedin_url),
  UID: (contact) => [contact.id],
  CATEGORIES: (contact) => contact.tags ?? [],
};
const present = (value: string | null): string[] => (value === null ? [] : [value]);

type Fold = (text: string) => string;
/**
 * RFC 4790's collations that RFC 6352 §8.3 requires: i;ascii-casemap folds ASCII letters only; i;unicode-casemap
 * (RFC 5051) folds every letter's case after compatibility decomposition; i;octet compares as given.
 */
const COLLATIONS: Record<string, Fold> = {
  'i;ascii-casemap': (text) => text.replace(/[A-Z]/g, (letter) => letter.toLowerCase()),
  'i;unicode-casemap': (text) => text.normalize('NFKD').toUpperCase().toLowerCase(),
  'i;octet': (text) => text,
};
const MATCH_TYPES: Record<string, (value: string, wanted: string) => boolean> = {
  equals: (value, wanted) => value === wanted,
  contains: (value, wanted) => value.includes(wanted),
  'starts-with': (value, wanted) => value.startsWith(wanted),
  'ends-with': (value, wanted) => value.endsWith(wanted),
};

/**
 * The most prop-filters and text-matches a filter may hold together. Clients send a handful; each is run on every card,
 * and a 4 MB filter of 52,000 cost 0.1 s of CPU a card, 18 minutes for a book of 10,000.
 */
export const MAX_FILTER_TESTS = 64;

/** Reads CARDDAV:filter (RFC 6352 §10.5); none matches every card. What we can't apply is a 403 naming its precondition. */
export function readQueryFilter(filter: XmlElement | undefined): ContactFilter {
  if (filter === undefined) return () => true;
  const tests = filter.children.reduce((count, child) => count + 1 + child.children.length, 0);
  if (tests > MAX_FILTER_TESTS) throw unsupportedFilter(`more than ${MAX_FILTER_TESTS} prop-filters and text-matches`);
  const propFilters = filter.children.map((child) => {
    if (!isElement(child, CARDDAV_NS, 'prop-filter')) throw unsupportedFilter(`CARDDAV:${child.name} is not supported in a filter`);
    return readPropFilter(child);
  });
  return combined(testOf(filter), propFilters);
}

function readPropFilter(element: XmlElement): ContactFilter {
  const name = (element.attributes.name ?? '').toUpperCase();
  const values = PROPERTY_VALUES[name];
  if (values === undefined) throw unsupportedFilter(`a prop-filter on "${name}" is not supported`);
  if (childOf(element, CARDDAV_NS, 'is-not-defined')) return (contact) => values(contact).length === 0;
  const matches = element.children.map((child) => {
    if (!isElement(child, CARDDAV_NS, 'text-match')) throw unsupportedFilter(`CARDDAV:${child.name} is not supported in a prop-filter`);
    return readTextMatch(child);
  });
  if (matches.length === 0) return (contact) => values(contact).length > 0;
  const test = combined(
    testOf(element),
    matches.map((match) => (contact: Contact) => values(contact).some(match)),
  );
  return (contact) => values(contact).length > 0 && test(contact);
}

function readTextMatch(element: XmlElement): (value: string) => boolean {
  const fold = COLLATIONS[element.attributes.collation ?? 'i;unicode-casemap'];
  if (fold === undefined) {
    throw new DavError(403, `Collation "${element.attributes.collation}" is not supported`, carddav('supported-collation'));
  }
  const match = MATCH_TYPES[element.attributes['match-type'] ?? 'contains'];
  if (match === undefined) throw unsupportedFilter(`match-type "${element.attributes['match-type']}" is not supported`);
  const negate = readYesNo(element.attributes['negate-condition']);
  const wanted = fold(element.text);
  return (value) => match(fold(value), wanted) !== negate;
}

function testOf(element: XmlElement): 'anyof' | 'allof' {
  const test = element.attributes.test ?? 'anyof';
  if (test !== 'anyof' && test !== 'allof') throw new InputError(`test must be anyof or allof; got "${test}"`);
  return test;
}

function readYesNo(value: string | undefined): boolean {
  if (value === undefined || value === 'no') return false;
  if (value === 'yes') return true;
  throw new InputError(`negate-condition must be yes or no; got "${value}"`);
}

function combined(test: 'anyof' | 'allof', filters: readonly ContactFilter[]): ContactFilter {
  if (filters.length === 0) return () => true;
  return test === 'anyof'
    ? (contact) => filters.some((filter) => filter(contact))
    : (contact) => filters.every((filter) => filter(contact));
}

const unsupportedFilter = (message: string) => new DavError(403, `Filter not supported: ${message}`, carddav('supported-filter'));
