import { describe, expect, it } from 'vitest';
import { COMPACT_FIELDS, CONTACT_FIELD_NAMES, projectContact } from '../../src/mcp/contact-fields.js';
import { contactUrlFor } from '../../src/mcp/contact-url.js';
import { fittingPrefix, withoutLargestFields } from '../../src/mcp/result-budget.js';
import type { Contact } from '../../src/domain/contact.js';

const size = (value: unknown) => Buffer.byteLength(JSON.stringify(value));

describe('fittingPrefix', () => {
  const items = [{ a: 'x'.repeat(10) }, { a: 'y'.repeat(10) }, { a: 'z'.repeat(10) }];

  it('keeps the longest prefix whose JSON array fits, to the byte', () => {
    expect(fittingPrefix(items, size(items))).toEqual(items);
    expect(fittingPrefix(items, size(items) - 1)).toEqual(items.slice(0, 2));
    expect(fittingPrefix(items, size(items.slice(0, 1)))).toEqual(items.slice(0, 1));
    expect(fittingPrefix(items, size(items.slice(0, 1)) - 1)).toEqual([]);
    expect(fittingPrefix([], 0)).toEqual([]);
  });
});

describe('withoutLargestFields', () => {
  const value = { id: 'i', name: 'n', small: 's', big: 'b'.repeat(100), bigger: 'B'.repeat(200) };

  it('leaves the object whole when it fits', () => {
    expect(withoutLargestFields(value, size(value), ['id'])).toEqual({ value, omitted: [] });
  });

  it('leaves out the largest fields first until it fits, never the kept ones, and names them in order', () => {
    const fitted = withoutLargestFields(value, size(value) - 1, ['id']);
    expect(fitted.omitted).toEqual(['bigger']);
    expect(fitted.value).toEqual({ id: 'i', name: 'n', small: 's', big: 'b'.repeat(100) });
    expect(size(fitted.value)).toBeLessThanOrEqual(size(value) - 1);
    const tight = withoutLargestFields(value, 40, ['id', 'name']);
    expect(tight.omitted).toEqual(['big', 'bigger']);
    expect(size(tight.value)).toBeLessThanOrEqual(40);
    expect(withoutLargestFields(value, 1, ['id', 'name']).value).toEqual({ id: 'i', name: 'n' });
  });
});

describe('projectContact', () => {
  const contact = Object.fromEntries(CONTACT_FIELD_NAMES.map((name) => [name, `${name} value`])) as unknown as Contact;

  it('keeps the chosen fields in the contact’s order, and always the id', () => {
    expect(projectContact(contact, ['email', 'name'])).toEqual({ id: 'id value', name: 'name value', email: 'email value' });
    expect(Object.keys(projectContact(contact, ['email', 'name']))).toEqual(['id', 'name', 'email']);
  });

  it('by default (the compact set) leaves out only enrichment and research_data', () => {
    expect(CONTACT_FIELD_NAMES.filter((name) => !COMPACT_FIELDS.includes(name))).toEqual(['enrichment', 'research_data']);
  });
});

describe('contactUrlFor', () => {
  it('fills {id} of CONTACT_URL_TEMPLATE, or names the contact under the issuer', () => {
    expect(contactUrlFor('https://app.example.com/c/{id}?tab=info', 'https://api.example.com')('a b')).toBe(
      'https://app.example.com/c/a%20b?tab=info',
    );
    expect(contactUrlFor(null, 'https://api.example.com')('0190')).toBe('https://api.example.com/contacts/0190');
  });
});
