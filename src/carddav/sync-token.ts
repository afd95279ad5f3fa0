import { assertTokenOwner, decodeSyncToken, encodeSyncToken, type SyncToken } from '../domain/changes.js';
import { PublicError } from '../domain/errors.js';
import type { ServiceKey } from '../domain/service-key.js';
import { DavError } from './dav-error.js';
import { dav } from './multistatus.js';

/** RFC 6578 wants a URI: the change feed's signed token, under a name of ours. */
const TOKEN_URI_PREFIX = 'http://contacts-read-api.invalid/ns/sync/';
/**
 * A token's issue time is rounded down to the hour: the book's sync token (and getctag) then stays the same while
 * nothing changes, so a client that polls them does not sync for nothing. Rounding down only makes a token expire
 * earlier, never later than its changes are kept.
 */
const ISSUE_TIME_RESOLUTION_MS = 3_600_000;

export const INVALID_SYNC_TOKEN_MESSAGE = 'Sync token is unknown, altered, of another address book or expired; sync again from scratch';

/** The sync token (a URI) of the owner's book at `seq`, the change-feed position everything up to it is sent. */
export function syncTokenUri(ownerId: string, seq: number, key: ServiceKey, now: number): string {
  const issuedAt = now - (now % ISSUE_TIME_RESOLUTION_MS);
  return TOKEN_URI_PREFIX + encodeSyncToken({ ownerId, seq, after: null, issuedAt, listedThrough: null }, key);
}

/** The position a client's sync token names, or 403 valid-sync-token for anything this book did not issue. */
export function positionOfSyncToken(uri: string, ownerId: string, key: ServiceKey): SyncToken {
  if (!uri.startsWith(TOKEN_URI_PREFIX)) throw invalidSyncToken();
  const token = refusingAsInvalid(() => decodeSyncToken(uri.slice(TOKEN_URI_PREFIX.length), key));
  refusingAsInvalid(() => assertTokenOwner(token, ownerId));
  // A walk's token is the REST change feed's; the book never issues one.
  if (token.listedThrough !== null) throw invalidSyncToken();
  return token;
}

/** Throws `error` again, a refusal of the client's token (any PublicError under 500) as a 403 valid-sync-token. */
export function asInvalidSyncToken(error: unknown): never {
  if (error instanceof PublicError && error.status < 500) throw invalidSyncToken();
  throw error;
}

function refusingAsInvalid<T>(read: () => T): T {
  try {
    return read();
  } catch (error) {
    return asInvalidSyncToken(error);
  }
}

const invalidSyncToken = () => new DavError(403, INVALID_SYNC_TOKEN_MESSAGE, dav('valid-sync-token'));
