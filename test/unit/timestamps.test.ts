import { describe, expect, it } from 'vitest';
import { parseIsoDateTime, toIsoMillis } from '../../src/domain/timestamps.js';

const CANONICAL = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

describe('toIsoMillis', () => {
  it('writes ISO 8601 in UTC with milliseconds', () => {
    expect(toIsoMillis(new Date(0))).toBe('1970-01-01T00:00:00.000Z');
    expect(toIsoMillis(new Date(Date.UTC(2024, 4, 1, 9, 30, 0, 7)))).toBe('2024-05-01T09:30:00.007Z');
  });
});

describe('parseIsoDateTime with a UTC designator', () => {
  it.each([
    ['2024-05-01T09:30:00Z', '2024-05-01T09:30:00.000Z'],
    ['2024-05-01T09:30:00.000Z', '2024-05-01T09:30:00.000Z'],
    ['2024-05-01T09:30:00z', '2024-05-01T09:30:00.000Z'],
    ['2024-05-01t09:30:00Z', '2024-05-01T09:30:00.000Z'],
    ['2024-05-01T09:30Z', '2024-05-01T09:30:00.000Z'],
    ['1970-01-01T00:00:00Z', '1970-01-01T00:00:00.000Z'],
    ['9999-12-31T23:59:59Z', '9999-12-31T23:59:59.000Z'],
  ])('reads %s as %s', (text, iso) => {
    expect(parseIsoDateTime(text)).toBe(iso);
  });
});

describe('parseIsoDateTime with a numeric offset converts to UTC', () => {
  it.each([
    ['2024-05-01T09:30:00+02:00', '2024-05-01T07:30:00.000Z'],
    ['2024-05-01T09:30:00+0200', '2024-05-01T07:30:00.000Z'],
    ['2024-05-01T09:30:00+02', '2024-05-01T07:30:00.000Z'],
    ['2024-05-01T09:30:00-05:30', '2024-05-01T15:00:00.000Z'],
    ['2024-05-01T09:30:00-0530', '2024-05-01T15:00:00.000Z'],
    ['2024-05-01T09:30:00+05:45', '2024-05-01T03:45:00.000Z'],
    ['2024-05-01T09:30:00+00:00', '2024-05-01T09:30:00.000Z'],
    ['2024-05-01T09:30:00-00:00', '2024-05-01T09:30:00.000Z'],
    ['2024-05-01T09:30+02:00', '2024-05-01T07:30:00.000Z'],
    ['2024-05-01T09:30:00.250+02:00', '2024-05-01T07:30:00.250Z'],
  ])('reads %s as %s', (text, iso) => {
    expect(parseIsoDateTime(text)).toBe(iso);
  });

  it('crosses into the previous day, month and year', () => {
    expect(parseIsoDateTime('2024-01-01T01:00:00+02:00')).toBe('2023-12-31T23:00:00.000Z');
  });

  it('crosses into the next day', () => {
    expect(parseIsoDateTime('2024-02-28T22:00:00-03:00')).toBe('2024-02-29T01:00:00.000Z');
  });
});

describe('parseIsoDateTime fractional seconds', () => {
  it.each([
    ['2024-05-01T09:30:00.5Z', '2024-05-01T09:30:00.500Z'],
    ['2024-05-01T09:30:00.12Z', '2024-05-01T09:30:00.120Z'],
    ['2024-05-01T09:30:00.123Z', '2024-05-01T09:30:00.123Z'],
    ['2024-05-01T09:30:00.1234Z', '2024-05-01T09:30:00.123Z'],
    ['2024-05-01T09:30:00.123456Z', '2024-05-01T09:30:00.123Z'],
    ['2024-05-01T09:30:00.123456789Z', '2024-05-01T09:30:00.123Z'],
    ['2024-05-01T09:30:00,5Z', '2024-05-01T09:30:00.500Z'],
  ])('reads %s as %s (padded or truncated to milliseconds)', (text, iso) => {
    expect(parseIsoDateTime(text)).toBe(iso);
  });

  it('truncates rather than rounds (.9999 stays in the same second)', () => {
    expect(parseIsoDateTime('2024-12-31T23:59:59.9999Z')).toBe('2024-12-31T23:59:59.999Z');
  });

  it('refuses more than nine fractional digits', () => {
    expect(parseIsoDateTime('2024-05-01T09:30:00.1234567890Z')).toBeNull();
  });

  it('refuses a fraction without seconds', () => {
    expect(parseIsoDateTime('2024-05-01T09:30.5Z')).toBeNull();
  });

  it('refuses a decimal point without digits', () => {
    expect(parseIsoDateTime('2024-05-01T09:30:00.Z')).toBeNull();
  });
});

describe('parseIsoDateTime separators and whitespace', () => {
  it('accepts a space instead of T', () => {
    expect(parseIsoDateTime('2024-05-01 09:30:00Z')).toBe('2024-05-01T09:30:00.000Z');
    expect(parseIsoDateTime('2024-05-01 09:30:00+02:00')).toBe('2024-05-01T07:30:00.000Z');
  });

  it('ignores surrounding whitespace', () => {
    expect(parseIsoDateTime('  2024-05-01T09:30:00Z\n')).toBe('2024-05-01T09:30:00.000Z');
  });

  it.each([
    '2024-05-01T09:30:00 Z',
    '2024-05-01T09:30:00 +02:00',
    '2024-05-01  09:30:00Z',
    '2024-05-01_09:30:00Z',
    '2024/05/01T09:30:00Z',
    '20240501T093000Z',
  ])('refuses %j', (text) => {
    expect(parseIsoDateTime(text)).toBeNull();
  });
});

describe('parseIsoDateTime refuses a date-time without a zone', () => {
  it.each(['2024-05-01T09:30:00', '2024-05-01T09:30:00.000', '2024-05-01 09:30', '2024-05-01T09:30'])(
    'refuses %j (its instant is unknown)',
    (text) => {
      expect(parseIsoDateTime(text)).toBeNull();
    },
  );

  it('refuses a date alone', () => {
    expect(parseIsoDateTime('2024-05-01')).toBeNull();
    expect(parseIsoDateTime('2024-05-01Z')).toBeNull();
  });
});

describe('parseIsoDateTime refuses malformed offsets', () => {
  it.each([
    '2024-05-01T09:30:00+2:00',
    '2024-05-01T09:30:00+2',
    '2024-05-01T09:30:00+02:0',
    '2024-05-01T09:30:00+020',
    '2024-05-01T09:30:00+02:00:00',
    '2024-05-01T09:30:00+24:00',
    '2024-05-01T09:30:00+99:99',
    '2024-05-01T09:30:00UTC',
    '2024-05-01T09:30:00GMT',
    '2024-05-01T09:30:00ZZ',
  ])('refuses %j', (text) => {
    expect(parseIsoDateTime(text)).toBeNull();
  });
});

describe('parseIsoDateTime refuses impossible calendar values (UTC designator)', () => {
  it.each([
    '2024-02-30T10:00:00Z',
    '2024-02-31T10:00:00Z',
    '2023-02-29T10:00:00Z',
    '2024-04-31T10:00:00Z',
    '2024-13-01T10:00:00Z',
    '2024-00-10T10:00:00Z',
    '2024-01-00T10:00:00Z',
    '2024-01-32T10:00:00Z',
    '2024-01-01T24:00:00Z',
    '2024-01-01T25:00:00Z',
    '2024-01-01T10:60:00Z',
    '2024-01-01T10:00:60Z',
    '2024-12-31T23:59:60Z',
  ])('refuses %s', (text) => {
    expect(parseIsoDateTime(text)).toBeNull();
  });

  it.each([
    '2024-02-30T10:00:00+02:00',
    '2023-02-29T10:00:00+00:00',
    '2024-04-31T10:00:00+01:00',
    '2024-01-01T24:00:00+01:00',
    '2024-01-01T10:00:00+15:00',
    '2024-01-01T10:00:00+01:60',
  ])('refuses %s: numeric offsets get the same calendar checks', (text) => {
    expect(parseIsoDateTime(text)).toBeNull();
  });

  it('accepts 29 February in a leap year with an offset', () => {
    expect(parseIsoDateTime('2024-02-29T01:00:00+02:00')).toBe('2024-02-28T23:00:00.000Z');
  });

  it('refuses year 0000', () => {
    expect(parseIsoDateTime('0000-01-01T00:00:00Z')).toBeNull();
    expect(parseIsoDateTime('0000-06-15T12:00:00+02:00')).toBeNull();
  });

  it('accepts year 0001', () => {
    expect(parseIsoDateTime('0001-01-01T00:00:00Z')).toBe('0001-01-01T00:00:00.000Z');
  });

  it('accepts 29 February of a leap year', () => {
    expect(parseIsoDateTime('2024-02-29T10:00:00Z')).toBe('2024-02-29T10:00:00.000Z');
    expect(parseIsoDateTime('2000-02-29T10:00:00Z')).toBe('2000-02-29T10:00:00.000Z');
  });

  it('refuses 29 February of a century year that is not a leap year', () => {
    expect(parseIsoDateTime('1900-02-29T10:00:00Z')).toBeNull();
  });

  it('accepts the last valid second of a month', () => {
    expect(parseIsoDateTime('2024-04-30T23:59:59.999Z')).toBe('2024-04-30T23:59:59.999Z');
  });
});

describe('parseIsoDateTime refuses out-of-range fields with an offset', () => {
  it.each([
    '2024-13-01T10:00:00+01:00',
    '2024-01-00T10:00:00+01:00',
    '2024-01-01T25:00:00+01:00',
    '2024-01-01T10:60:00+01:00',
    '2024-01-01T10:00:60+01:00',
  ])('refuses %s', (text) => {
    expect(parseIsoDateTime(text)).toBeNull();
  });
});

describe('parseIsoDateTime refuses garbage', () => {
  it.each([
    '',
    '   ',
    'garbage',
    'null',
    'now',
    'yesterday',
    '1714555800',
    '1714555800000',
    'Wed, 01 May 2024 09:30:00 GMT',
    'May 1, 2024 09:30:00 UTC',
    '24-05-01T09:30:00Z',
    '+002024-05-01T09:30:00Z',
    '2024-5-1T09:30:00Z',
    '2024-05-01T9:30:00Z',
    '2024-05-01T09:30:0Z',
    '2024-05-01T09Z',
    '2024-05-01T09:30:00Z trailing',
    'x2024-05-01T09:30:00Z',
  ])('refuses %j', (text) => {
    expect(parseIsoDateTime(text)).toBeNull();
  });
});

describe('parseIsoDateTime output', () => {
  it('is always ISO 8601 UTC with exactly three fractional digits', () => {
    const inputs = [
      '2024-05-01T09:30Z',
      '2024-05-01 09:30:00+0530',
      '2024-05-01T09:30:00.1-01',
      '2024-05-01T09:30:00.987654321+14:00',
      '2024-05-01t09:30:00,4z',
    ];
    for (const text of inputs) {
      const iso = parseIsoDateTime(text);
      expect(iso, text).toMatch(CANONICAL);
    }
  });

  it('is a fixed point: parsing canonical output returns it unchanged', () => {
    const iso = '2024-05-01T07:30:00.250Z';
    expect(parseIsoDateTime(iso)).toBe(iso);
    expect(parseIsoDateTime(parseIsoDateTime('2024-05-01T09:30:00.250+02:00')!)).toBe(iso);
  });

  it('names the same instant as the input', () => {
    const text = '2024-05-01T09:30:00.250+02:00';
    expect(Date.parse(parseIsoDateTime(text)!)).toBe(Date.parse(text));
  });
});
