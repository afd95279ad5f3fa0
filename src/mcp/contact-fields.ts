import { CONTACT_FIELDS, type Contact } from '../domain/contact.js';

export type ContactFieldName = keyof Contact;

export const CONTACT_FIELD_NAMES = CONTACT_FIELDS.map((field) => field.name) as [ContactFieldName, ...ContactFieldName[]];

/**
 * Fields the tools return unless asked otherwise: all but the free-form blobs. `enrichment` and `research_data` hold
 * scraped profiles of several KB each, which would fill an agent's context with a page of contacts.
 */
export const COMPACT_FIELDS: readonly ContactFieldName[] = CONTACT_FIELD_NAMES.filter(
  (name) => name !== 'enrichment' && name !== 'research_data',
);

/** The contact with only the chosen fields, in the contact's own field order; `id` always. */
export function projectContact(contact: Contact, fields: readonly ContactFieldName[]): Partial<Contact> {
  const chosen = new Set<ContactFieldName>(['id', ...fields]);
  return Object.fromEntries(Object.entries(contact).filter(([name]) => chosen.has(name as ContactFieldName))) as Partial<Contact>;
}
