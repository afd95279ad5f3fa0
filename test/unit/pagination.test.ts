import { describe, expect, it } from 'vitest';
import {
  LIMIT_DEFAULT,
  LIMIT_MAX,
  LIMIT_MIN,
  OFFSET_DEFAULT,
  OFFSET_MAX,
  OFFSET_MIN,
  PAGE_PARAMETERS,
  nextOffset,
  paginationOf,
  parsePageRequest,
} from '../../src/domain/pagination.js';
import { expectInputError } from '../support/thrown.js';

/** Runs `action`, which must throw; returns what it threw. */
const rangeMessage = (name: 'limit' | 'offset', text: string): string =>
  name === 'limit'
    ? `Query parameter "limit" must be a base-10 integer from 1 to 100; got "${text}"`
    : `Query parameter "offset" must be a base-10 integer from 0 to 2147483647; got "${text}"`;

describe('pagination constants', () => {
  it('match the spec: limit 1..100 default 50, offset 0..2^31-1 default 0', () => {
    expect(LIMIT_MIN).toBe(1);
    expect(LIMIT_MAX).toBe(100);
    expect(LIMIT_DEFAULT).toBe(50);
    expect(OFFSET_MIN).toBe(0);
    expect(OFFSET_MAX).toBe(2_147_483_647);
    expect(OFFSET_DEFAULT).toBe(0);
    expect(PAGE_PARAMETERS).toEqual(['limit', 'offset']);
  });
});

describe('parsePageRequest defaults', () => {
  it('applies limit 50 and offset 0 when the query is empty', () => {
    expect(parsePageRequest({})).toStrictEqual({ limit: 50, offset: 0 });
  });

  it('applies the default limit when only offset is given', () => {
    expect(parsePageRequest({ offset: '10' })).toStrictEqual({ limit: 50, offset: 10 });
  });

  it('applies the default offset when only limit is given', () => {
    expect(parsePageRequest({ limit: '10' })).toStrictEqual({ limit: 10, offset: 0 });
  });

  it('treats a parameter whose value is undefined as absent', () => {
    expect(parsePageRequest({ limit: undefined, offset: undefined })).toStrictEqual({ limit: 50, offset: 0 });
  });
});

describe('parsePageRequest accepted values', () => {
  it.each([
    ['1', 1],
    ['2', 2],
    ['50', 50],
    ['99', 99],
    ['100', 100],
  ])('accepts limit "%s" as %i (bounds 1..100 inclusive)', (text, value) => {
    expect(parsePageRequest({ limit: text }).limit).toBe(value);
  });

  it.each([
    ['0', 0],
    ['1', 1],
    ['12345', 12345],
    ['2147483646', 2_147_483_646],
    ['2147483647', 2_147_483_647],
  ])('accepts offset "%s" as %i (bounds 0..2^31-1 inclusive)', (text, value) => {
    expect(parsePageRequest({ offset: text }).offset).toBe(value);
  });

  it('accepts both parameters together', () => {
    expect(parsePageRequest({ limit: '25', offset: '75' })).toStrictEqual({ limit: 25, offset: 75 });
  });

  it('accepts leading zeros as base-10 digits ("007" is 7, "0000000100" is 100)', () => {
    expect(parsePageRequest({ limit: '007', offset: '0000000100' })).toStrictEqual({ limit: 7, offset: 100 });
  });

  it('returns numbers, not strings', () => {
    const page = parsePageRequest({ limit: '5', offset: '6' });
    expect(typeof page.limit).toBe('number');
    expect(typeof page.offset).toBe('number');
  });
});

const INVALID_FORMS = [
  'abc',
  '1.5',
  '1e2',
  '',
  ' 5',
  '5 ',
  '+5',
  '-1',
  '0x10',
  '0b1',
  '1_0',
  '١٢', // Arabic-Indic digits are not base-10 ASCII digits
  '99999999999999999999',
  'NaN',
  'Infinity',
  'null',
  'true',
];

describe('parsePageRequest rejects every non-decimal form, naming the parameter', () => {
  it.each(INVALID_FORMS)('rejects limit "%s"', (text) => {
    expectInputError(() => parsePageRequest({ limit: text }), rangeMessage('limit', text));
  });

  it.each(INVALID_FORMS)('rejects offset "%s"', (text) => {
    expectInputError(() => parsePageRequest({ offset: text }), rangeMessage('offset', text));
  });
});

describe('parsePageRequest rejects values out of bounds, naming the parameter', () => {
  it.each(['0', '101', '1000', '2147483647', '2147483648'])('rejects limit "%s"', (text) => {
    expectInputError(() => parsePageRequest({ limit: text }), rangeMessage('limit', text));
  });

  it.each(['2147483648', '4294967296', '9999999999'])('rejects offset "%s"', (text) => {
    expectInputError(() => parsePageRequest({ offset: text }), rangeMessage('offset', text));
  });

  it('reports limit, not offset, when only limit is wrong', () => {
    expectInputError(() => parsePageRequest({ limit: '0', offset: '5' }), rangeMessage('limit', '0'));
  });

  it('reports offset, not limit, when only offset is wrong', () => {
    expectInputError(() => parsePageRequest({ limit: '5', offset: 'x' }), rangeMessage('offset', 'x'));
  });

  it('reports limit first when both are wrong', () => {
    expectInputError(() => parsePageRequest({ limit: '101', offset: '-1' }), rangeMessage('limit', '101'));
  });
});

describe('parsePageRequest rejects repeated parameters', () => {
  it('rejects limit given twice (an array)', () => {
    expectInputError(() => parsePageRequest({ limit: ['10', '20'] }), 'Query parameter "limit" must be given at most once');
  });

  it('rejects offset given twice (an array)', () => {
    expectInputError(() => parsePageRequest({ offset: ['0', '0'] }), 'Query parameter "offset" must be given at most once');
  });

  it('rejects an array even when it holds a single valid value', () => {
    expectInputError(() => parsePageRequest({ limit: ['10'] }), 'Query parameter "limit" must be given at most once');
  });

  it('rejects an empty array', () => {
    expectInputError(() => parsePageRequest({ offset: [] }), 'Query parameter "offset" must be given at most once');
  });
});

describe('parsePageRequest rejects every other query parameter', () => {
  it.each(['owner_id', 'user_id', 'userId', 'ownerId', 'owner', 'page', 'cursor', 'sort', 'Limit', 'OFFSET', ''])(
    'rejects the unknown parameter "%s"',
    (name) => {
      expectInputError(
        () => parsePageRequest({ [name]: '1' }),
        `Unknown query parameter "${name}"; accepted parameters are limit and offset`,
      );
    },
  );

  it('rejects an unknown parameter even alongside valid limit and offset', () => {
    expectInputError(
      () => parsePageRequest({ limit: '10', offset: '0', owner_id: '00000000-0000-0000-0000-000000000000' }),
      'Unknown query parameter "owner_id"; accepted parameters are limit and offset',
    );
  });

  it('reports an unknown parameter before any invalid value', () => {
    expectInputError(
      () => parsePageRequest({ limit: 'abc', user_id: '1' }),
      'Unknown query parameter "user_id"; accepted parameters are limit and offset',
    );
  });

  it('rejects an unknown parameter whose value is undefined (its name alone is refused)', () => {
    expectInputError(
      () => parsePageRequest({ userId: undefined }),
      'Unknown query parameter "userId"; accepted parameters are limit and offset',
    );
  });
});

describe('nextOffset', () => {
  it('is offset + returned when more contacts follow', () => {
    expect(nextOffset({ limit: 50, offset: 0 }, 50, 120)).toBe(50);
    expect(nextOffset({ limit: 50, offset: 50 }, 50, 120)).toBe(100);
  });

  it('is null on a last page that ends exactly at total', () => {
    expect(nextOffset({ limit: 50, offset: 100 }, 20, 120)).toBeNull();
    expect(nextOffset({ limit: 50, offset: 50 }, 50, 100)).toBeNull();
  });

  it('is null when a single full page holds everything (total equals limit)', () => {
    expect(nextOffset({ limit: 50, offset: 0 }, 50, 50)).toBeNull();
  });

  it('is null on an empty listing', () => {
    expect(nextOffset({ limit: 50, offset: 0 }, 0, 0)).toBeNull();
  });

  it('is null for an offset past the end (empty page)', () => {
    expect(nextOffset({ limit: 50, offset: 200 }, 0, 120)).toBeNull();
    expect(nextOffset({ limit: 50, offset: 120 }, 0, 120)).toBeNull();
  });

  it('is null for an empty page even if total claims more (never loops on the same offset)', () => {
    expect(nextOffset({ limit: 50, offset: 10 }, 0, 20)).toBeNull();
  });

  it('uses the count returned, not the limit, to place the next page', () => {
    expect(nextOffset({ limit: 50, offset: 0 }, 30, 100)).toBe(30);
  });

  it('is offset + 1 with limit 1 when one more contact follows', () => {
    expect(nextOffset({ limit: 1, offset: 0 }, 1, 2)).toBe(1);
    expect(nextOffset({ limit: 1, offset: 1 }, 1, 2)).toBeNull();
  });
});

describe('paginationOf', () => {
  it('echoes limit and offset and carries total and nextOffset', () => {
    expect(paginationOf({ limit: 10, offset: 20 }, 10, 45)).toStrictEqual({
      limit: 10,
      offset: 20,
      total: 45,
      nextOffset: 30,
    });
  });

  it('has nextOffset null on the last page', () => {
    expect(paginationOf({ limit: 10, offset: 40 }, 5, 45)).toStrictEqual({
      limit: 10,
      offset: 40,
      total: 45,
      nextOffset: null,
    });
  });

  it('has nextOffset null and echoes the requested offset when it is past the end', () => {
    expect(paginationOf({ limit: 10, offset: 1000 }, 0, 45)).toStrictEqual({
      limit: 10,
      offset: 1000,
      total: 45,
      nextOffset: null,
    });
  });

  it('describes an empty listing with the defaults', () => {
    expect(paginationOf(parsePageRequest({}), 0, 0)).toStrictEqual({
      limit: 50,
      offset: 0,
      total: 0,
      nextOffset: null,
    });
  });
});
