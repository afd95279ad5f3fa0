import { describe, expect, it } from 'vitest';
import { InputError } from '../../src/domain/errors.js';
import { decodeListingCursor, encodeListingCursor, LISTING_CURSOR_REFUSED } from '../../src/domain/listing-cursor.js';
import { ServiceKey } from '../../src/domain/service-key.js';
import { thrown } from '../support/thrown.js';

const KEY = new ServiceKey('a'.repeat(64));
const OWNER = '0190a1b2-0000-7000-8000-00000000000a';
const OTHER_OWNER = '0190a1b2-0000-7000-8000-00000000000b';
const AFTER = { created_at: '2024-05-01 09:30:00.123456+00', id: '0190a1b2-0000-7000-8000-0000000000ff' };

const payloadOf = (fields: unknown) => Buffer.from(JSON.stringify(fields)).toString('base64url');
/** A cursor this key signed for the owner over any payload: what only the server can make. */
const signed = (payload: string) => `${payload}.${KEY.digest('listing cursor', `${OWNER}\0${payload}`, 16)}`;

describe('listing cursors', () => {
  it('give back the sort key they were made with, for the owner they were made for', () => {
    const cursor = encodeListingCursor(AFTER, OWNER, KEY);
    expect(decodeListingCursor(cursor, OWNER, KEY)).toEqual(AFTER);
    expect(decodeListingCursor(cursor, OWNER.toUpperCase(), KEY)).toEqual(AFTER);
  });

  it('are refused when made up, altered, another owner’s or another database’s', () => {
    const cursor = encodeListingCursor(AFTER, OWNER, KEY);
    const [payload = '', signature = ''] = cursor.split('.');
    const refused = [
      ['made up', 'abc'],
      ['empty', ''],
      ['unsigned', payload],
      ['altered', `${payloadOf([AFTER.created_at, OTHER_OWNER])}.${signature}`],
      ['resigned by a guess', `${payload}.${'A'.repeat(22)}`],
    ] as const;
    for (const [what, text] of refused) {
      expect(
        thrown(() => decodeListingCursor(text, OWNER, KEY)),
        what,
      ).toEqual(new InputError(LISTING_CURSOR_REFUSED));
    }
    expect(thrown(() => decodeListingCursor(cursor, OTHER_OWNER, KEY))).toBeInstanceOf(InputError);
    expect(thrown(() => decodeListingCursor(cursor, OWNER, new ServiceKey('b'.repeat(64))))).toBeInstanceOf(InputError);
  });

  it('are refused when signed but not holding a sort key', () => {
    for (const fields of [[AFTER.created_at], [AFTER.created_at, 'not-a-uuid'], [1, AFTER.id], { created_at: AFTER.created_at }]) {
      expect(
        thrown(() => decodeListingCursor(signed(payloadOf(fields)), OWNER, KEY)),
        JSON.stringify(fields),
      ).toBeInstanceOf(InputError);
    }
    expect(decodeListingCursor(signed(payloadOf([AFTER.created_at, AFTER.id])), OWNER, KEY)).toEqual(AFTER);
  });
});
