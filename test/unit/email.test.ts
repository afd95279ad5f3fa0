import { describe, expect, it } from 'vitest';
import { isEmailAddress, parseEmailAddress } from '../../src/domain/email.js';
import { expectInputError } from '../support/thrown.js';

describe('email addresses', () => {
  it.each(['a@b', 'ada.lovelace+work@example.com', 'ADA@EXAMPLE.COM'])('accepts %j', (text) => {
    expect(isEmailAddress(text)).toBe(true);
  });

  it.each(['', 'not-an-email', '@example.com', 'ada@', 'a@b@c', 'ada lovelace@example.com', ' ada@example.com'])('refuses %j', (text) => {
    expect(isEmailAddress(text)).toBe(false);
  });

  it('parseEmailAddress trims, and names the input it refuses', () => {
    expect(parseEmailAddress('  ada@example.com\n', '--email')).toBe('ada@example.com');
    expectInputError(() => parseEmailAddress('ada', '--email'), '--email must be an email address; got "ada"');
  });
});
