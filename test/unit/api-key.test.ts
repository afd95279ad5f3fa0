import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import {
  KEY_CHECKSUM_LENGTH,
  KEY_PREFIX_PATTERN,
  KEY_RANDOM_LENGTH,
  apiKeyStart,
  generateApiKey,
  hashApiKey,
  isWellFormedApiKey,
} from '../../src/domain/api-key.js';

const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';
const PREFIX = 'cnt';
const HEAD = `${PREFIX}_live_`;
const SECRET_LENGTH = KEY_RANDOM_LENGTH + KEY_CHECKSUM_LENGTH;

function secretOf(key: string, prefix = PREFIX): string {
  return key.slice(`${prefix}_live_`.length);
}

function replaceAt(text: string, index: number, replacement: string): string {
  return text.slice(0, index) + replacement + text.slice(index + 1);
}

describe('generateApiKey format', () => {
  it('is <prefix>_live_ followed by 36 base62 characters (30 random + 6 checksum)', () => {
    expect(KEY_RANDOM_LENGTH).toBe(30);
    expect(KEY_CHECKSUM_LENGTH).toBe(6);
    for (let i = 0; i < 200; i++) {
      expect(generateApiKey(PREFIX)).toMatch(/^cnt_live_[0-9A-Za-z]{36}$/);
    }
  });

  it('uses the prefix it is given', () => {
    expect(generateApiKey('acme42')).toMatch(/^acme42_live_[0-9A-Za-z]{36}$/);
  });

  it('carries at least 160 bits of randomness (30 base62 characters ≈ 178.6 bits)', () => {
    const bits = KEY_RANDOM_LENGTH * Math.log2(62);
    expect(bits).toBeGreaterThanOrEqual(160);
    expect(bits).toBeCloseTo(178.6, 1);
  });

  it('produces keys that its own checker accepts', () => {
    for (let i = 0; i < 200; i++) {
      expect(isWellFormedApiKey(generateApiKey(PREFIX), PREFIX)).toBe(true);
    }
  });

  it('produces a different key on every call', () => {
    const keys = new Set(Array.from({ length: 5000 }, () => generateApiKey(PREFIX)));
    expect(keys.size).toBe(5000);
  });

  it('produces a different random part on every call (not just a different checksum)', () => {
    const randoms = new Set(Array.from({ length: 5000 }, () => secretOf(generateApiKey(PREFIX)).slice(0, 30)));
    expect(randoms.size).toBe(5000);
  });
});

describe('generateApiKey randomness is uniform over base62', () => {
  const KEYS = 2000;
  const counts = new Map<string, number>(BASE62.split('').map((char) => [char, 0]));
  for (let i = 0; i < KEYS; i++) {
    for (const char of secretOf(generateApiKey(PREFIX)).slice(0, KEY_RANDOM_LENGTH)) {
      counts.set(char, (counts.get(char) ?? 0) + 1);
    }
  }
  const mean = (KEYS * KEY_RANDOM_LENGTH) / 62;

  it('draws random characters only from the 62 base62 characters', () => {
    expect([...counts.keys()].sort()).toEqual(BASE62.split('').sort());
  });

  it('uses every base62 character in the random part', () => {
    for (const [char, count] of counts) expect(count, `character ${char}`).toBeGreaterThan(0);
  });

  it('uses no character more than twice, nor less than half, as often as the mean', () => {
    for (const [char, count] of counts) {
      expect(count, `character ${char}`).toBeLessThanOrEqual(2 * mean);
      expect(count, `character ${char}`).toBeGreaterThanOrEqual(mean / 2);
    }
  });

  it('passes a chi-square test (61 degrees of freedom, false-alarm rate about 1e-6)', () => {
    // A modulo bias without rejection sampling (256 % 62 = 8 favoured characters) scores about 500 here.
    let chiSquare = 0;
    for (const count of counts.values()) chiSquare += (count - mean) ** 2 / mean;
    expect(chiSquare).toBeLessThan(130);
  });
});

describe('isWellFormedApiKey checksum', () => {
  const keys = Array.from({ length: 5 }, () => generateApiKey(PREFIX));

  it('rejects every single-character substitution at every position of the secret', () => {
    for (const key of keys) {
      const secret = secretOf(key);
      expect(secret).toHaveLength(SECRET_LENGTH);
      for (let position = 0; position < SECRET_LENGTH; position++) {
        for (const char of BASE62) {
          if (char === secret[position]) continue;
          const typo = HEAD + replaceAt(secret, position, char);
          expect(isWellFormedApiKey(typo, PREFIX), `${typo} (position ${position})`).toBe(false);
        }
      }
    }
  });

  it('rejects every swap of two adjacent, different characters of the secret', () => {
    for (const key of keys) {
      const secret = secretOf(key);
      for (let position = 0; position < SECRET_LENGTH - 1; position++) {
        const a = secret[position]!;
        const b = secret[position + 1]!;
        if (a === b) continue;
        const swapped = secret.slice(0, position) + b + a + secret.slice(position + 2);
        expect(isWellFormedApiKey(HEAD + swapped, PREFIX), `swap at ${position}`).toBe(false);
      }
    }
  });

  it('rejects a key whose letters changed case', () => {
    for (const key of keys) {
      const secret = secretOf(key);
      const flipped = [...secret].map((c) => (c === c.toUpperCase() ? c.toLowerCase() : c.toUpperCase())).join('');
      if (flipped !== secret) expect(isWellFormedApiKey(HEAD + flipped, PREFIX)).toBe(false);
    }
  });

  it('accepts the unchanged keys', () => {
    for (const key of keys) expect(isWellFormedApiKey(key, PREFIX)).toBe(true);
  });
});

describe('isWellFormedApiKey shape', () => {
  const key = generateApiKey(PREFIX);
  const secret = secretOf(key);

  it('rejects a valid secret under another prefix', () => {
    expect(isWellFormedApiKey(`abc_live_${secret}`, PREFIX)).toBe(false);
    expect(isWellFormedApiKey(key, 'abc')).toBe(false);
  });

  it('rejects a prefix that is only a part of the configured one, or extends it', () => {
    expect(isWellFormedApiKey(`cn_live_${secret}`, PREFIX)).toBe(false);
    expect(isWellFormedApiKey(`cntx_live_${secret}`, PREFIX)).toBe(false);
    expect(isWellFormedApiKey(key, 'cn')).toBe(false);
  });

  it('rejects the prefix in another case', () => {
    expect(isWellFormedApiKey(`CNT_live_${secret}`, PREFIX)).toBe(false);
    expect(isWellFormedApiKey(`cnt_LIVE_${secret}`, PREFIX)).toBe(false);
  });

  it('rejects a _test_ key with a valid secret', () => {
    expect(isWellFormedApiKey(`cnt_test_${secret}`, PREFIX)).toBe(false);
  });

  it('rejects other separators around live', () => {
    expect(isWellFormedApiKey(`cnt-live-${secret}`, PREFIX)).toBe(false);
    expect(isWellFormedApiKey(`cnt_live${secret}`, PREFIX)).toBe(false);
    expect(isWellFormedApiKey(`cnt__live_${secret}`, PREFIX)).toBe(false);
    expect(isWellFormedApiKey(`cnt_live__${secret}`, PREFIX)).toBe(false);
  });

  it('rejects a key truncated by one character or more', () => {
    for (let length = 0; length < SECRET_LENGTH; length++) {
      expect(isWellFormedApiKey(HEAD + secret.slice(0, length), PREFIX), `length ${length}`).toBe(false);
    }
  });

  it('rejects a key extended by any base62 character', () => {
    for (const char of BASE62) expect(isWellFormedApiKey(key + char, PREFIX), `+${char}`).toBe(false);
  });

  it('rejects a key with a character inserted at the front of the secret', () => {
    expect(isWellFormedApiKey(`${HEAD}0${secret}`, PREFIX)).toBe(false);
  });

  it('rejects surrounding whitespace and line breaks', () => {
    expect(isWellFormedApiKey(`${key} `, PREFIX)).toBe(false);
    expect(isWellFormedApiKey(` ${key}`, PREFIX)).toBe(false);
    expect(isWellFormedApiKey(`${key}\n`, PREFIX)).toBe(false);
  });

  it.each(['-', '_', '+', '/', '=', ' ', '.', '~', 'é', 'Ａ', '\u0000'])(
    'rejects the non-base62 character %j anywhere in the secret',
    (char) => {
      for (const position of [0, 15, KEY_RANDOM_LENGTH - 1, KEY_RANDOM_LENGTH, SECRET_LENGTH - 1]) {
        expect(isWellFormedApiKey(HEAD + replaceAt(secret, position, char), PREFIX)).toBe(false);
      }
    },
  );

  it('rejects empty and head-only tokens', () => {
    expect(isWellFormedApiKey('', PREFIX)).toBe(false);
    expect(isWellFormedApiKey(HEAD, PREFIX)).toBe(false);
    expect(isWellFormedApiKey(secret, PREFIX)).toBe(false);
  });

  it('rejects 36 base62 characters whose checksum does not match', () => {
    expect(isWellFormedApiKey(HEAD + '0'.repeat(36), PREFIX)).toBe(false);
    expect(isWellFormedApiKey(HEAD + secret.slice(0, 30) + '000000', PREFIX)).toBe(false);
  });
});

describe('apiKeyStart', () => {
  it('shows the head and the first and last 4 characters of the secret, joined by an ellipsis', () => {
    expect(apiKeyStart(`cnt_live_abcd${'0'.repeat(28)}wxyz`)).toBe('cnt_live_abcd…wxyz');
    expect(apiKeyStart(`acme42_live_ABCD${'x'.repeat(28)}9876`)).toBe('acme42_live_ABCD…9876');
  });

  it("shows 4 of a generated key's 30 random characters, and 4 of its checksum", () => {
    for (let i = 0; i < 50; i++) {
      const key = generateApiKey(PREFIX);
      const start = apiKeyStart(key);
      expect(start).toMatch(/^cnt_live_[0-9A-Za-z]{4}…[0-9A-Za-z]{4}$/);
      expect(start.slice(HEAD.length, HEAD.length + 4)).toBe(secretOf(key).slice(0, 4));
      expect(start.slice(-4)).toBe(secretOf(key).slice(-4));
    }
  });
});

describe('KEY_PREFIX_PATTERN', () => {
  it.each(['cnt', 'ab', 'a1', 'acme2024', 'abcdefghijklmnop'])('accepts %j', (prefix) => {
    expect(KEY_PREFIX_PATTERN.test(prefix)).toBe(true);
  });

  it.each(['', 'a', '1ab', 'Cnt', 'c_t', 'c-t', 'abcdefghijklmnopq', 'cnt ', 'ünt'])('rejects %j', (prefix) => {
    expect(KEY_PREFIX_PATTERN.test(prefix)).toBe(false);
  });
});

describe('hashApiKey', () => {
  it('is the lowercase hex SHA-256 of the token', () => {
    const key = generateApiKey(PREFIX);
    expect(hashApiKey(key)).toBe(createHash('sha256').update(key).digest('hex'));
    expect(hashApiKey(key)).toMatch(/^[0-9a-f]{64}$/);
  });

  it('matches the known SHA-256 test vectors', () => {
    expect(hashApiKey('')).toBe('e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855');
    expect(hashApiKey('abc')).toBe('ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad');
  });

  it('hashes the UTF-8 bytes of non-ASCII text', () => {
    expect(hashApiKey('clé')).toBe(createHash('sha256').update(Buffer.from('clé', 'utf8')).digest('hex'));
  });

  it('is deterministic and differs between keys', () => {
    const a = generateApiKey(PREFIX);
    const b = generateApiKey(PREFIX);
    expect(hashApiKey(a)).toBe(hashApiKey(a));
    expect(hashApiKey(a)).not.toBe(hashApiKey(b));
  });
});
