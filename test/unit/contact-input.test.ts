import { describe, expect, it } from 'vitest';
import { contactFieldsOfKind, IMPORTABLE_FIELDS, type ContactInput } from '../../src/domain/contact.js';
import { MAX_TEXT_LENGTH, assertUniqueIds, normalizeContactInput } from '../../src/domain/contact-input.js';
import { EVERY_FIELD_VALUES } from '../support/contact-fixtures.js';
import { expectInputError } from '../support/thrown.js';

const TEXT_FIELDS = contactFieldsOfKind('text');
const DATE_TIME_FIELDS = contactFieldsOfKind('timestamp');
const OBJECT_FIELDS = contactFieldsOfKind('object');
const UUID = '0190a3c4-5b6d-7e8f-9a0b-1c2d3e4f5a6b';

describe('normalizeContactInput record shape', () => {
  it('turns an empty object into no id and no values', () => {
    expect(normalizeContactInput({})).toStrictEqual({ id: null, values: {} });
  });

  it.each([
    ['null', null],
    ['undefined', undefined],
    ['an array', []],
    ['an array of objects', [{ name: 'x' }]],
    ['a string', 'name'],
    ['a number', 42],
    ['a boolean', true],
  ])('refuses %s instead of an object', (_label, raw) => {
    expectInputError(() => normalizeContactInput(raw), 'expected an object of contact fields');
  });

  it('accepts every importable field at once', () => {
    const raw = { id: UUID, ...EVERY_FIELD_VALUES };
    expect(Object.keys(raw).sort()).toEqual([...IMPORTABLE_FIELDS].sort());
    expect(normalizeContactInput(raw)).toStrictEqual({ id: UUID, values: EVERY_FIELD_VALUES });
  });
});

describe('normalizeContactInput merged_into (migrations keep their soft merges)', () => {
  const id = '0190a3c4-0000-7000-8000-00000000000b';
  const survivor = '0190A3C4-0000-7000-8000-00000000000C';

  it('accepts a UUID, lower-cased, outside the contact values', () => {
    expect(normalizeContactInput({ id, merged_into: survivor })).toEqual({ id, values: {}, mergedInto: survivor.toLowerCase() });
  });

  it('treats null or blank as not merged', () => {
    expect(normalizeContactInput({ id, merged_into: null })).toEqual({ id, values: {} });
    expect(normalizeContactInput({ id, merged_into: ' ' })).toEqual({ id, values: {} });
  });

  it('refuses a malformed id and a record without its own id', () => {
    expectInputError(() => normalizeContactInput({ id, merged_into: 'x' }), 'field "merged_into" must be a UUID; got "x"');
    expectInputError(() => normalizeContactInput({ merged_into: survivor }), 'field "merged_into" needs the record\'s "id"');
  });
});

describe('normalizeContactInput unknown fields', () => {
  it.each(['owner_id', 'user_id', 'userId', 'is_self', 'mergedInto', 'Name', 'full_name', 'secret_hash', ''])(
    'refuses the unknown field %j',
    (field) => {
      expectInputError(() => normalizeContactInput({ [field]: 'x' }), `unknown field "${field}"`);
    },
  );

  it('refuses an unknown field even when its value is null', () => {
    expectInputError(() => normalizeContactInput({ name: 'x', owner_id: null }), 'unknown field "owner_id"');
  });

  it('reports an unknown field before an invalid known field', () => {
    expectInputError(() => normalizeContactInput({ name: 42, extra: 1 }), 'unknown field "extra"');
  });

  it('refuses an own "__proto__" key from JSON', () => {
    expectInputError(() => normalizeContactInput(JSON.parse('{"__proto__": {"x": 1}}')), 'unknown field "__proto__"');
  });
});

describe('normalizeContactInput text fields', () => {
  it.each(TEXT_FIELDS)('leaves %s out of values when absent', (field) => {
    const { values } = normalizeContactInput({});
    expect(Object.hasOwn(values, field)).toBe(false);
  });

  it.each(TEXT_FIELDS)('leaves %s out of values when explicitly undefined', (field) => {
    const { values } = normalizeContactInput({ [field]: undefined });
    expect(Object.hasOwn(values, field)).toBe(false);
  });

  it.each(TEXT_FIELDS)('keeps %s as given', (field) => {
    expect(normalizeContactInput({ [field]: 'value' }).values).toStrictEqual({ [field]: 'value' });
  });

  it.each(TEXT_FIELDS)('trims %s', (field) => {
    expect(normalizeContactInput({ [field]: ' \t value  x \n' }).values).toStrictEqual({ [field]: 'value  x' });
  });

  it.each(TEXT_FIELDS)('gives %s null when null', (field) => {
    expect(normalizeContactInput({ [field]: null }).values).toStrictEqual({ [field]: null });
  });

  it.each(TEXT_FIELDS)('gives %s null when empty or blank', (field) => {
    expect(normalizeContactInput({ [field]: '' }).values).toStrictEqual({ [field]: null });
    expect(normalizeContactInput({ [field]: ' \t\r\n ' }).values).toStrictEqual({ [field]: null });
  });

  it.each(TEXT_FIELDS)('refuses a non-string %s, naming the field', (field) => {
    for (const value of [42, 0, true, false, ['a'], { a: 1 }]) {
      expectInputError(() => normalizeContactInput({ [field]: value }), `field "${field}" must be a string or null`);
    }
  });

  it.each(TEXT_FIELDS)('refuses a NUL character in %s', (field) => {
    expectInputError(() => normalizeContactInput({ [field]: 'a\u0000b' }), `field "${field}" must not contain NUL characters`);
  });

  it('refuses a NUL character even at the edge, where trimming would not remove it', () => {
    expectInputError(() => normalizeContactInput({ name: '\u0000' }), 'field "name" must not contain NUL characters');
  });

  it.each(TEXT_FIELDS)('accepts %s of exactly the maximum length', (field) => {
    const text = 'a'.repeat(MAX_TEXT_LENGTH);
    expect(normalizeContactInput({ [field]: text }).values).toStrictEqual({ [field]: text });
  });

  it.each(TEXT_FIELDS)('refuses %s one character over the maximum length', (field) => {
    expectInputError(
      () => normalizeContactInput({ [field]: 'a'.repeat(MAX_TEXT_LENGTH + 1) }),
      `field "${field}" is longer than 65536 characters`,
    );
  });

  it('sets the maximum length at 65536', () => {
    expect(MAX_TEXT_LENGTH).toBe(65_536);
  });

  it('keeps unicode text and inner whitespace unchanged', () => {
    expect(normalizeContactInput({ name: 'Zoë  Łukasz 山田' }).values.name).toBe('Zoë  Łukasz 山田');
  });

  it('does not validate the format of email, linkedin_url, birthday or source', () => {
    expect(
      normalizeContactInput({ email: 'not an email', linkedin_url: 'nope', birthday: 'May 1st', source: 'anything' }).values,
    ).toStrictEqual({ email: 'not an email', linkedin_url: 'nope', birthday: 'May 1st', source: 'anything' });
  });

  it('includes only the fields given, leaving the others absent', () => {
    const { values } = normalizeContactInput({ name: 'Ada', email: null });
    expect(Object.keys(values).sort()).toEqual(['email', 'name']);
  });
});

describe('normalizeContactInput id', () => {
  it('is null when absent, null, empty or blank', () => {
    expect(normalizeContactInput({}).id).toBeNull();
    expect(normalizeContactInput({ id: null }).id).toBeNull();
    expect(normalizeContactInput({ id: '' }).id).toBeNull();
    expect(normalizeContactInput({ id: '   ' }).id).toBeNull();
  });

  it('is never part of values', () => {
    expect(normalizeContactInput({ id: UUID }).values).toStrictEqual({});
  });

  it('keeps a lowercase UUID', () => {
    expect(normalizeContactInput({ id: UUID }).id).toBe(UUID);
  });

  it('lowercases an uppercase UUID', () => {
    expect(normalizeContactInput({ id: UUID.toUpperCase() }).id).toBe(UUID);
  });

  it('trims the id before checking it', () => {
    expect(normalizeContactInput({ id: `  ${UUID.toUpperCase()}\n` }).id).toBe(UUID);
  });

  it('accepts any UUID version, including the nil UUID', () => {
    expect(normalizeContactInput({ id: '123e4567-e89b-12d3-a456-426614174000' }).id).toBe('123e4567-e89b-12d3-a456-426614174000');
    expect(normalizeContactInput({ id: '00000000-0000-0000-0000-000000000000' }).id).toBe('00000000-0000-0000-0000-000000000000');
  });

  it.each([
    'not-a-uuid',
    '42',
    '0190a3c45b6d7e8f9a0b1c2d3e4f5a6b',
    '{0190a3c4-5b6d-7e8f-9a0b-1c2d3e4f5a6b}',
    'urn:uuid:0190a3c4-5b6d-7e8f-9a0b-1c2d3e4f5a6b',
    '0190a3c4-5b6d-7e8f-9a0b-1c2d3e4f5a6',
    '0190a3c4-5b6d-7e8f-9a0b-1c2d3e4f5a6b0',
    '0190a3c4-5b6d-7e8f-9a0b-1c2d3e4f5a6g',
    '0190a3c4_5b6d_7e8f_9a0b_1c2d3e4f5a6b',
  ])('refuses the id %j, quoting it', (id) => {
    expectInputError(() => normalizeContactInput({ id }), `field "id" must be a UUID; got "${id}"`);
  });

  it('quotes the trimmed id in the error', () => {
    expectInputError(() => normalizeContactInput({ id: '  nope  ' }), 'field "id" must be a UUID; got "nope"');
  });

  it.each([[42], [true], [[UUID]], [{ id: UUID }]])('refuses the non-string id %j', (id) => {
    expectInputError(() => normalizeContactInput({ id }), 'field "id" must be a string or null');
  });

  it('refuses a NUL character in the id', () => {
    expectInputError(() => normalizeContactInput({ id: `${UUID}\u0000` }), 'field "id" must not contain NUL characters');
  });
});

describe('normalizeContactInput date-time fields', () => {
  it.each(DATE_TIME_FIELDS)('canonicalises %s to UTC ISO with milliseconds', (field) => {
    expect(normalizeContactInput({ [field]: '2024-05-01 11:30:00.5+02:00' }).values).toStrictEqual({
      [field]: '2024-05-01T09:30:00.500Z',
    });
  });

  it.each(DATE_TIME_FIELDS)('trims %s before parsing', (field) => {
    expect(normalizeContactInput({ [field]: '  2024-05-01T09:30:00Z ' }).values).toStrictEqual({
      [field]: '2024-05-01T09:30:00.000Z',
    });
  });

  it.each(DATE_TIME_FIELDS)('refuses %s without a time zone, quoting the value', (field) => {
    expectInputError(
      () => normalizeContactInput({ [field]: '2024-05-01T09:30:00' }),
      `field "${field}" must be an ISO 8601 date-time with a time zone; got "2024-05-01T09:30:00"`,
    );
  });

  it.each(DATE_TIME_FIELDS)('refuses an impossible %s', (field) => {
    expectInputError(
      () => normalizeContactInput({ [field]: '2024-02-30T00:00:00Z' }),
      `field "${field}" must be an ISO 8601 date-time with a time zone; got "2024-02-30T00:00:00Z"`,
    );
  });

  it.each(DATE_TIME_FIELDS)('refuses a garbage %s, quoting the trimmed value', (field) => {
    expectInputError(
      () => normalizeContactInput({ [field]: ' yesterday ' }),
      `field "${field}" must be an ISO 8601 date-time with a time zone; got "yesterday"`,
    );
  });

  it.each(DATE_TIME_FIELDS)('refuses a non-string %s (e.g. epoch milliseconds)', (field) => {
    expectInputError(() => normalizeContactInput({ [field]: 1714555800000 }), `field "${field}" must be a string or null`);
  });

  it.each(DATE_TIME_FIELDS)('refuses a NUL character in %s', (field) => {
    expectInputError(
      () => normalizeContactInput({ [field]: '2024-05-01T09:30:00Z\u0000' }),
      `field "${field}" must not contain NUL characters`,
    );
  });

  it.each(['enriched_at', 'researched_at'])('gives %s null when null, empty or blank', (field) => {
    expect(normalizeContactInput({ [field]: null }).values).toStrictEqual({ [field]: null });
    expect(normalizeContactInput({ [field]: '' }).values).toStrictEqual({ [field]: null });
    expect(normalizeContactInput({ [field]: '  ' }).values).toStrictEqual({ [field]: null });
  });

  it.each(['enriched_at', 'researched_at'])('leaves %s out of values when absent', (field) => {
    expect(Object.hasOwn(normalizeContactInput({}).values, field)).toBe(false);
  });

  it.each(['created_at', 'updated_at'])('treats a null, empty or blank %s as absent (it cannot be null)', (field) => {
    for (const value of [null, '', '   ', undefined]) {
      const { values } = normalizeContactInput({ [field]: value });
      expect(Object.hasOwn(values, field), String(value)).toBe(false);
    }
  });
});

describe('normalizeContactInput object fields', () => {
  it.each(OBJECT_FIELDS)('keeps %s as the given object', (field) => {
    const value = { nested: { list: [1, 'two', null] }, flag: true };
    expect(normalizeContactInput({ [field]: value }).values).toStrictEqual({ [field]: value });
  });

  it.each(OBJECT_FIELDS)('keeps an empty %s object', (field) => {
    expect(normalizeContactInput({ [field]: {} }).values).toStrictEqual({ [field]: {} });
  });

  it.each(OBJECT_FIELDS)('gives %s null when null', (field) => {
    expect(normalizeContactInput({ [field]: null }).values).toStrictEqual({ [field]: null });
  });

  it.each(OBJECT_FIELDS)('leaves %s out of values when absent', (field) => {
    expect(Object.hasOwn(normalizeContactInput({}).values, field)).toBe(false);
  });

  it.each(OBJECT_FIELDS)('refuses %s that is an array, string, number or boolean', (field) => {
    for (const value of [[], [{ a: 1 }], '', '{}', 0, 1, true]) {
      expectInputError(() => normalizeContactInput({ [field]: value }), `field "${field}" must be an object or null`);
    }
  });
});

describe('normalizeContactInput object contents must be storable as JSON in every database', () => {
  const refusal = (field: string) => `field "${field}" must not contain NUL characters or unpaired surrogates`;

  it.each(OBJECT_FIELDS)('refuses a NUL character in a string value of %s', (field) => {
    expectInputError(() => normalizeContactInput({ [field]: { note: 'a\u0000b' } }), refusal(field));
  });

  it.each(OBJECT_FIELDS)('refuses a NUL character in a key of %s', (field) => {
    expectInputError(() => normalizeContactInput({ [field]: { 'a\u0000b': 1 } }), refusal(field));
  });

  it.each(OBJECT_FIELDS)('refuses a NUL character nested deep in arrays and objects of %s', (field) => {
    expectInputError(() => normalizeContactInput({ [field]: { list: [1, { inner: ['ok', '\u0000'] }] } }), refusal(field));
  });

  it.each(OBJECT_FIELDS)('refuses an unpaired high surrogate in %s', (field) => {
    expectInputError(() => normalizeContactInput({ [field]: { note: 'x\uD83Dy' } }), refusal(field));
    expectInputError(() => normalizeContactInput({ [field]: { note: 'x\uD83D' } }), refusal(field));
  });

  it.each(OBJECT_FIELDS)('refuses an unpaired low surrogate in %s', (field) => {
    expectInputError(() => normalizeContactInput({ [field]: { note: '\uDE00x' } }), refusal(field));
    expectInputError(() => normalizeContactInput({ [field]: { '\uDE00': true } }), refusal(field));
  });

  it.each(OBJECT_FIELDS)('accepts properly paired surrogates (emoji) and other unicode in %s', (field) => {
    const value = { 'clé 😀': ['😀', 'Zoë', '山田'], n: 1, b: false, z: null };
    expect(normalizeContactInput({ [field]: value }).values).toStrictEqual({ [field]: value });
  });
});

describe('normalizeContactInput tags', () => {
  it('keeps an array of strings', () => {
    expect(normalizeContactInput({ tags: ['a', 'b'] }).values).toStrictEqual({ tags: ['a', 'b'] });
  });

  it('trims each tag and drops blank ones', () => {
    expect(normalizeContactInput({ tags: ['  a ', '', '   ', '\tb\n'] }).values).toStrictEqual({ tags: ['a', 'b'] });
  });

  it('removes duplicates after trimming, keeping the first occurrence order', () => {
    expect(normalizeContactInput({ tags: ['b', 'a', ' b', 'a ', 'c', 'a'] }).values).toStrictEqual({
      tags: ['b', 'a', 'c'],
    });
  });

  it('treats tags that differ in case as different', () => {
    expect(normalizeContactInput({ tags: ['VIP', 'vip'] }).values).toStrictEqual({ tags: ['VIP', 'vip'] });
  });

  it('keeps an empty array as an empty array', () => {
    expect(normalizeContactInput({ tags: [] }).values).toStrictEqual({ tags: [] });
  });

  it('gives an array of only blank tags as an empty array', () => {
    expect(normalizeContactInput({ tags: [' ', ''] }).values).toStrictEqual({ tags: [] });
  });

  it('gives null when null', () => {
    expect(normalizeContactInput({ tags: null }).values).toStrictEqual({ tags: null });
  });

  it('leaves tags out of values when absent', () => {
    expect(Object.hasOwn(normalizeContactInput({}).values, 'tags')).toBe(false);
  });

  it.each([
    ['a string', 'a,b'],
    ['an empty string', ''],
    ['an object', { 0: 'a' }],
    ['a number', 3],
    ['an array with a number', ['a', 1]],
    ['an array with null', ['a', null]],
    ['an array with an array', [['a']]],
    ['an array with an object', [{ tag: 'a' }]],
  ])('refuses %s', (_label, tags) => {
    expectInputError(() => normalizeContactInput({ tags }), 'field "tags" must be an array of strings or null');
  });

  it('refuses a NUL character in a tag', () => {
    expectInputError(
      () => normalizeContactInput({ tags: ['ok', 'b\u0000d'] }),
      'field "tags" must not contain NUL characters or unpaired surrogates',
    );
  });

  it('refuses an unpaired surrogate in a tag or a text field, which PostgreSQL could not store as given', () => {
    expectInputError(
      () => normalizeContactInput({ tags: ['\ud800'] }),
      'field "tags" must not contain NUL characters or unpaired surrogates',
    );
    expectInputError(() => normalizeContactInput({ name: 'a\udc00' }), 'field "name" must not contain unpaired surrogates');
    expect(normalizeContactInput({ name: 'emoji \ud83d\ude00' }).values.name).toBe('emoji 😀');
  });

  it('does not change the array it was given', () => {
    const tags = [' a ', 'a'];
    normalizeContactInput({ tags });
    expect(tags).toEqual([' a ', 'a']);
  });
});

describe('assertUniqueIds', () => {
  const record = (label: string, raw: Record<string, unknown>) => ({ label, contact: normalizeContactInput(raw) });
  const OTHER = '0190a3c4-5b6d-7e8f-9a0b-000000000002';

  it('accepts an empty batch', () => {
    expect(() => assertUniqueIds([])).not.toThrow();
  });

  it('accepts records with distinct ids', () => {
    expect(() => assertUniqueIds([record('line 2', { id: UUID }), record('line 3', { id: OTHER })])).not.toThrow();
  });

  it('accepts any number of records without an id', () => {
    const contact: ContactInput = { id: null, values: {} };
    expect(() =>
      assertUniqueIds([
        { label: 'line 2', contact },
        { label: 'line 3', contact },
        { label: 'line 4', contact },
      ]),
    ).not.toThrow();
  });

  it('refuses the second record naming an id, citing both labels', () => {
    expectInputError(
      () => assertUniqueIds([record('line 2', { id: UUID }), record('line 3', {}), record('line 4', { id: UUID })]),
      `line 4: id ${UUID} already appears at line 2`,
    );
  });

  it('cites the first occurrence when an id appears three times', () => {
    expectInputError(
      () =>
        assertUniqueIds([
          record('record 1', { id: UUID }),
          record('record 2', { id: OTHER }),
          record('record 3', { id: UUID }),
          record('record 4', { id: UUID }),
        ]),
      `record 3: id ${UUID} already appears at record 1`,
    );
  });

  it('sees ids that differ only in case as the same once normalised', () => {
    expectInputError(
      () => assertUniqueIds([record('line 2', { id: UUID.toUpperCase() }), record('line 3', { id: UUID })]),
      `line 3: id ${UUID} already appears at line 2`,
    );
  });
});
