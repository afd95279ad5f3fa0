import { createHash, randomBytes } from 'node:crypto';
import { crc32 } from 'node:zlib';

const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';
/** 30 base62 characters carry 178 bits of randomness; the spec of our keys asks for at least 160. */
export const KEY_RANDOM_LENGTH = 30;
/** CRC32 of the random part, base62, zero-padded: lets clients and secret scanners spot typos offline. */
export const KEY_CHECKSUM_LENGTH = 6;
export const KEY_PREFIX_PATTERN = /^[a-z][a-z0-9]{1,15}$/;

/** Characters of the secret a key's display form shows at each end. */
const START_SHOWN = 4;
const LIVE_MARKER = '_live_';

const SECRET_PATTERN = new RegExp(`^[0-9A-Za-z]{${KEY_RANDOM_LENGTH + KEY_CHECKSUM_LENGTH}}$`);

/** Creates a new plaintext key `<prefix>_live_<random><checksum>`. */
export function generateApiKey(prefix: string): string {
  const random = randomBase62(KEY_RANDOM_LENGTH);
  return `${prefix}${LIVE_MARKER}${random}${checksumOf(random)}`;
}

/**
 * What a settings page may show of a key, kept at its creation: `<prefix>_live_` and the secret's first and last
 * characters (`cnt_live_abcd…wxyz`). It names the key to its owner and leaves 26 random characters unknown.
 */
export function apiKeyStart(key: string): string {
  const secretAt = key.indexOf(LIVE_MARKER) + LIVE_MARKER.length;
  const secret = key.slice(secretAt);
  return `${key.slice(0, secretAt)}${secret.slice(0, START_SHOWN)}…${secret.slice(-START_SHOWN)}`;
}

/**
 * True when the token has the shape of a key of this deployment and its checksum matches.
 * Needs no database, so typos and garbage are turned away before any lookup.
 */
export function isWellFormedApiKey(token: string, prefix: string): boolean {
  const head = `${prefix}${LIVE_MARKER}`;
  if (!token.startsWith(head)) return false;
  const secret = token.slice(head.length);
  if (!SECRET_PATTERN.test(secret)) return false;
  const random = secret.slice(0, KEY_RANDOM_LENGTH);
  return secret.slice(KEY_RANDOM_LENGTH) === checksumOf(random);
}

/** Keys are high-entropy secrets, so a fast unsalted SHA-256 is the right digest (a slow KDF adds nothing). */
export function hashApiKey(token: string): string {
  return createHash('sha256').update(token, 'utf8').digest('hex');
}

function checksumOf(random: string): string {
  return toBase62(crc32(random), KEY_CHECKSUM_LENGTH);
}

function toBase62(value: number, width: number): string {
  let text = '';
  let rest = value;
  do {
    text = BASE62[rest % 62]! + text;
    rest = Math.floor(rest / 62);
  } while (rest > 0);
  return text.padStart(width, '0');
}

/** Uniform base62 by rejection sampling: bytes >= 248 are dropped so no character is favoured. */
function randomBase62(length: number): string {
  let text = '';
  while (text.length < length) {
    for (const byte of randomBytes(length * 2)) {
      if (byte < 248 && text.length < length) text += BASE62[byte % 62];
    }
  }
  return text;
}
