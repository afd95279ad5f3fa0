import { describe, expect, it } from 'vitest';
import { InputError } from '../../src/domain/errors.js';
import { isUuid, newId, parseChosenId } from '../../src/domain/ids.js';

const V7 = /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

/** The 48-bit Unix millisecond timestamp of a UUIDv7. */
const timestampOf = (id: string): number => parseInt(id.replace(/-/g, '').slice(0, 12), 16);
/** The 12-bit rand_a field of a UUIDv7, which newId uses as a counter within one millisecond. */
const counterOf = (id: string): number => parseInt(id.replace(/-/g, '').slice(13, 16), 16);

function expectStrictlyIncreasing(ids: readonly string[]): void {
  for (let i = 1; i < ids.length; i++) {
    if (!(ids[i - 1]! < ids[i]!)) throw new Error(`ids[${i - 1}] ${ids[i - 1]} is not below ids[${i}] ${ids[i]}`);
  }
}

describe('isUuid', () => {
  it.each([
    '0190a3c4-5b6d-7e8f-9a0b-1c2d3e4f5a6b',
    '0190A3C4-5B6D-7E8F-9A0B-1C2D3E4F5A6B',
    '123e4567-e89b-12d3-a456-426614174000',
    '00000000-0000-0000-0000-000000000000',
    'ffffffff-ffff-ffff-ffff-ffffffffffff',
  ])('accepts %s', (value) => {
    expect(isUuid(value)).toBe(true);
  });

  it.each([
    '',
    'not-a-uuid',
    '0190a3c45b6d7e8f9a0b1c2d3e4f5a6b',
    '{0190a3c4-5b6d-7e8f-9a0b-1c2d3e4f5a6b}',
    'urn:uuid:0190a3c4-5b6d-7e8f-9a0b-1c2d3e4f5a6b',
    ' 0190a3c4-5b6d-7e8f-9a0b-1c2d3e4f5a6b',
    '0190a3c4-5b6d-7e8f-9a0b-1c2d3e4f5a6b ',
    '0190a3c4-5b6d-7e8f-9a0b-1c2d3e4f5a6b\n',
    '0190a3c4-5b6d-7e8f-9a0b-1c2d3e4f5a6',
    '0190a3c4-5b6d-7e8f-9a0b-1c2d3e4f5a6b0',
    '0190a3c4-5b6d-7e8f-9a0b1c2d3e4f5a6b',
    '0190a3c-45b6d-7e8f-9a0b-1c2d3e4f5a6b',
    '0190a3c4-5b6d-7e8f-9a0b-1c2d3e4f5a6g',
    '0190a3c4_5b6d_7e8f_9a0b_1c2d3e4f5a6b',
  ])('refuses %j', (value) => {
    expect(isUuid(value)).toBe(false);
  });
});

describe('parseChosenId', () => {
  it('takes a UUID of any version in any case, as stored: lower-case', () => {
    expect(parseChosenId('123E4567-E89B-12D3-A456-426614174000')).toBe('123e4567-e89b-12d3-a456-426614174000');
    expect(parseChosenId('0190a3c4-5b6d-7e8f-9a0b-1c2d3e4f5a6b')).toBe('0190a3c4-5b6d-7e8f-9a0b-1c2d3e4f5a6b');
  });

  it.each([
    '',
    'user_42',
    '123e4567e89b12d3a456426614174000',
    '{123e4567-e89b-12d3-a456-426614174000}',
    ' 123e4567-e89b-12d3-a456-426614174000',
  ])('refuses %j with InputError naming the field', (value) => {
    expect(() => parseChosenId(value)).toThrow(new InputError(`id must be a UUID; got "${value}"`));
  });
});

describe('newId', () => {
  it('gives RFC 9562 version-7 UUIDs with the 10xx variant that isUuid accepts', () => {
    for (let i = 0; i < 1000; i++) {
      const id = newId();
      expect(id).toMatch(V7);
      expect(isUuid(id)).toBe(true);
    }
  });

  it('carries the current time in its first 48 bits', () => {
    const before = Date.now();
    const id = newId();
    const after = Date.now();
    expect(timestampOf(id)).toBeGreaterThanOrEqual(before);
    // A burst of earlier ids in this process may have pushed the counter a few milliseconds ahead.
    expect(timestampOf(id)).toBeLessThanOrEqual(after + 10);
  });

  it('gives 10,000 ids in a tight loop that sort strictly increasing, including within one millisecond', () => {
    const ids = Array.from({ length: 10_000 }, () => newId());
    expectStrictlyIncreasing(ids);
    expect(new Set(ids).size).toBe(10_000);
    for (const id of ids) expect(id).toMatch(V7);
    // The loop is fast enough that many ids share a millisecond: those are ordered by the counter alone.
    let sameMillisecond = 0;
    for (let i = 1; i < ids.length; i++) if (timestampOf(ids[i]!) === timestampOf(ids[i - 1]!)) sameMillisecond++;
    expect(sameMillisecond).toBeGreaterThan(1000);
  });

  it('keeps order for 10,000 ids all stamped with the same millisecond', () => {
    const now = Date.now() + 3_600_000;
    const ids = Array.from({ length: 10_000 }, () => newId(now));
    expectStrictlyIncreasing(ids);
    for (const id of ids) expect(id).toMatch(V7);
    expect(timestampOf(ids[0]!)).toBe(now);
  });

  it('counts up by one within a millisecond and rolls into the next millisecond at counter 0 after 0xfff', () => {
    const now = Date.now() + 7_200_000;
    const ids = Array.from({ length: 6000 }, () => newId(now));
    expect(timestampOf(ids[0]!)).toBe(now);
    expect(counterOf(ids[0]!)).toBeLessThan(2048);
    let rollovers = 0;
    for (let i = 1; i < ids.length; i++) {
      const previous = ids[i - 1]!;
      const current = ids[i]!;
      if (timestampOf(current) === timestampOf(previous)) {
        expect(counterOf(current)).toBe(counterOf(previous) + 1);
      } else {
        rollovers++;
        expect(counterOf(previous)).toBe(0xfff);
        expect(timestampOf(current)).toBe(timestampOf(previous) + 1);
        expect(counterOf(current)).toBe(0);
      }
    }
    expect(rollovers).toBeGreaterThanOrEqual(1);
  });

  it('never goes backwards when the clock does', () => {
    const now = Date.now() + 10_800_000;
    const ahead = newId(now);
    const behind = newId(now - 60_000);
    expect(behind > ahead).toBe(true);
    expect(timestampOf(behind)).toBe(now);
  });

  it('starts a fresh millisecond with a counter below 2048, leaving room to count', () => {
    let now = Date.now() + 14_400_000;
    for (let i = 0; i < 200; i++) {
      now += 1;
      expect(counterOf(newId(now))).toBeLessThan(2048);
    }
  });

  it('differs in its random bits between ids of the same millisecond', () => {
    const now = Date.now() + 18_000_000;
    const tails = new Set(Array.from({ length: 1000 }, () => newId(now).slice(19)));
    expect(tails.size).toBe(1000);
  });
});
