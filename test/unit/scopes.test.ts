import { describe, expect, it } from 'vitest';
import { InputError } from '../../src/domain/errors.js';
import { CONTACTS_READ, KNOWN_SCOPES, parseScopes } from '../../src/domain/scopes.js';
import { thrown } from '../support/thrown.js';

describe('scope constants', () => {
  it('know contacts:read as the only scope', () => {
    expect(CONTACTS_READ).toBe('contacts:read');
    expect(KNOWN_SCOPES).toEqual(['contacts:read']);
  });
});

describe('parseScopes', () => {
  it('reads a single scope', () => {
    expect(parseScopes('contacts:read')).toEqual(['contacts:read']);
  });

  it.each(['', ' ', '\t\n', ',', ' , ,, '])('reads %j as a key with no scope', (text) => {
    expect(parseScopes(text)).toEqual([]);
  });

  it.each(['contacts:read,contacts:read', 'contacts:read contacts:read', ' contacts:read ,\tcontacts:read\n', ',contacts:read,'])(
    'removes duplicates and separators from %j',
    (text) => {
      expect(parseScopes(text)).toEqual(['contacts:read']);
    },
  );

  it.each([
    ['contacts:write', 'contacts:write'],
    ['Contacts:Read', 'Contacts:Read'],
    ['CONTACTS:READ', 'CONTACTS:READ'],
    ['contacts', 'contacts'],
    ['contacts:read;admin', 'contacts:read;admin'],
    ['contacts:read, admin', 'admin'],
    ['*', '*'],
  ])('refuses %j, naming the unknown scope %j', (text, scope) => {
    const error = thrown(() => parseScopes(text));
    expect(error).toBeInstanceOf(InputError);
    expect((error as InputError).message).toBe(`Unknown scope "${scope}"; known scopes: contacts:read`);
  });
});
