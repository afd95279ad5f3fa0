import type { Contact } from 'contacts-read-api-client';
import { describe, expect, it } from 'vitest';
import { vcardCard } from '../../src/export/formats/vcard-card.js';
import { AWKWARD_CONTACT } from '../support/awkward-contact.js';
import { LISTED_NULLS } from '../support/contact-fixtures.js';

const FULL: Contact = { id: '0190f5d2-7c3e-7a10-8b2c-3d4e5f607182', ...AWKWARD_CONTACT, tags: [...AWKWARD_CONTACT.tags] };
const BARE: Contact = {
  id: '0190f5d2-7c3e-7a10-8b2c-3d4e5f607183',
  ...LISTED_NULLS,
  created_at: '2024-01-03T00:00:00.000Z',
  updated_at: '2024-01-03T04:05:06.789Z',
};

describe('vCard 3.0 for CardDAV (RFC 2426), from the export’s field mapping', () => {
  it('writes VERSION 3.0, UID as the id, TEL with the phone as given, EMAIL;TYPE=INTERNET and REV to the second', () => {
    const card = vcardCard(FULL, '3.0');
    expect(card.split('\r\n').join('\n').replace(/\n /g, '')).toBe(
      [
        'BEGIN:VCARD',
        'VERSION:3.0',
        `UID:${FULL.id}`,
        'FN:Zoë "Zed" O’Brien\\, Jr.',
        'N:Jr.;Zoë "Zed" O’Brien\\,;;;',
        'EMAIL;TYPE=INTERNET:zoe@example.com',
        'TEL;TYPE=VOICE:+1 (555) 010-9999',
        'ORG:Acme\\; Inc.\\, "Intl"',
        'TITLE:Head of R&D\\\\Ops',
        'ADR:;;;Zürich\\, Switzerland;;;',
        `NOTE:Met at the 2023 offsite.\\nLikes long descriptions: ${'日本語のテキストと絵文字 🎉\\, '.repeat(4)}end.`,
        'BDAY;VALUE=date:1906-12-09',
        'CATEGORIES:friend,a\\,b,ünïcode',
        'URL:https://www.linkedin.com/in/zoe-obrien',
        'REV:20240607T080910Z',
        'END:VCARD',
        '',
      ].join('\n'),
    );
  });

  it('ends every line with CRLF and folds at 75 octets', () => {
    const card = vcardCard(FULL, '3.0');
    expect(card.endsWith('END:VCARD\r\n')).toBe(true);
    expect(card.replace(/\r\n/g, '')).not.toMatch(/[\r\n]/);
    for (const line of card.split('\r\n')) expect(Buffer.byteLength(line)).toBeLessThanOrEqual(75);
  });

  it('always has N and FN, even without a name; leaves out what the contact lacks', () => {
    expect(vcardCard(BARE, '3.0')).toBe(
      ['BEGIN:VCARD', 'VERSION:3.0', `UID:${BARE.id}`, 'FN:', 'N:;;;;', 'REV:20240103T040506Z', 'END:VCARD', ''].join('\r\n'),
    );
  });

  it('keeps a plain-number phone as given, and writes birthdays as 3.0 dates (a year-less one as Apple does)', () => {
    const card = vcardCard({ ...BARE, phone: '+15550100', birthday: '--02-29' }, '3.0');
    expect(card).toContain('\r\nTEL;TYPE=VOICE:+15550100\r\n');
    expect(card).toContain('\r\nBDAY;X-APPLE-OMIT-YEAR=1604;VALUE=date:1604-02-29\r\n');
    expect(vcardCard({ ...BARE, birthday: 'around 1950' }, '3.0')).not.toContain('BDAY');
  });

  it('4.0 and 3.0 carry the same fields from the same mapping', () => {
    const names = (card: string) =>
      card
        .replace(/\r\n /g, '')
        .split('\r\n')
        .map((line) => line.split(/[;:]/, 1)[0])
        .filter((name) => name !== 'VERSION' && name !== '');
    expect(names(vcardCard(FULL, '3.0'))).toEqual(names(vcardCard(FULL, '4.0')));
  });
});
