import { randomBytes, randomInt } from 'node:crypto';
import { InputError } from './errors.js';

const UUID_PATTERN = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export function isUuid(value: string): boolean {
  return UUID_PATTERN.test(value);
}

/** The id as stored (lower-case), or null when it is not a UUID and so names nothing. */
export function canonicalId(value: string): string | null {
  return isUuid(value) ? value.toLowerCase() : null;
}

/**
 * A user id the caller chose (a host whose own user ids are UUIDs shares them with us), as stored. Only a UUID: the
 * same shape as the ids we make, which PostgreSQL stores as uuid and every owner-scoped table references.
 */
export function parseChosenId(value: string): string {
  const id = canonicalId(value);
  if (id === null) throw new InputError(`id must be a UUID; got "${value}"`);
  return id;
}

let lastMillis = 0;
let sequence = 0;

/**
 * A UUIDv7 (RFC 9562) that increases monotonically within this process: the 12-bit `rand_a` field is a
 * counter within one millisecond. Contacts created together therefore keep their order under the list's
 * `created_at, id` ordering.
 */
export function newId(now: number = Date.now()): string {
  if (now > lastMillis) {
    lastMillis = now;
    sequence = randomInt(0, 2048);
  } else if (++sequence > 0xfff) {
    lastMillis += 1;
    sequence = 0;
  }
  const bytes = randomBytes(16);
  bytes.writeUIntBE(lastMillis, 0, 6);
  bytes[6] = 0x70 | (sequence >> 8);
  bytes[7] = sequence & 0xff;
  bytes[8] = 0x80 | (bytes[8]! & 0x3f);
  const hex = bytes.toString('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}
