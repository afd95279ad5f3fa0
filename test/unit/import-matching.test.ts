import { describe, expect, it } from 'vitest';
import { emailKey, linkedinUrlKey, parseImportMatch } from '../../src/domain/import-matching.js';
import { LINKEDIN_URL_KEYS } from '../support/linkedin-urls.js';

describe('linkedinUrlKey', () => {
  it.each(LINKEDIN_URL_KEYS)('keys %s as %s', (url, key) => {
    expect(linkedinUrlKey(url)).toBe(key);
  });
});

describe('emailKey', () => {
  it('folds ASCII letters alone', () => {
    expect(emailKey('Ada.LOVELACE@Example.COM')).toBe('ada.lovelace@example.com');
    expect(emailKey('ÉMILE@ÉCOLE.FR')).toBe('Émile@École.fr');
  });
});

describe('parseImportMatch', () => {
  it('takes the fields comma-separated, in any order, or none', () => {
    expect(parseImportMatch('email', '--match')).toEqual(['email']);
    expect(parseImportMatch('linkedin_url', '--match')).toEqual(['linkedin_url']);
    expect(parseImportMatch('linkedin_url, email', '--match')).toEqual(['email', 'linkedin_url']);
    expect(parseImportMatch('email,email', '--match')).toEqual(['email']);
    expect(parseImportMatch('none', '--match')).toEqual([]);
  });

  it.each(['', 'phone', 'email,', 'none,email', 'EMAIL', 'linkedin'])('refuses %j, naming what it takes', (text) => {
    expect(() => parseImportMatch(text, 'match')).toThrow(`match must be email, linkedin_url, email,linkedin_url or none; got "${text}"`);
  });
});
