import { InputError } from './errors.js';
import { canonicalId } from './ids.js';
import type { SortKey } from './pagination.js';
import type { ServiceKey } from './service-key.js';
import { tokenFieldsOf } from './token-fields.js';

export const LISTING_CURSOR_REFUSED =
  'Invalid cursor: pass nextCursor exactly as this server returned it, or list from the start without one';

const SIGNATURE_PURPOSE = 'listing cursor';
const SIGNATURE_BYTES = 16;
/** The last contact listed as base64url JSON, and its signature (base64url of SIGNATURE_BYTES bytes). */
const CURSOR = /^([A-Za-z0-9_-]{1,300})\.([A-Za-z0-9_-]{22})$/;

/**
 * Where the next page of the owner's listing starts: after `after`, in list order. Opaque to clients, signed with the
 * service key over the owner's id as well, so that a cursor altered, made up, or taken from another owner is refused.
 */
export function encodeListingCursor(after: SortKey, ownerId: string, key: ServiceKey): string {
  const payload = Buffer.from(JSON.stringify([after.created_at, after.id])).toString('base64url');
  return `${payload}.${key.digest(SIGNATURE_PURPOSE, signedText(ownerId, payload), SIGNATURE_BYTES)}`;
}

/** The sort key a cursor of encodeListingCursor carries for this owner; InputError for anything else. */
export function decodeListingCursor(cursor: string, ownerId: string, key: ServiceKey): SortKey {
  const parts = CURSOR.exec(cursor);
  if (!parts) throw new InputError(LISTING_CURSOR_REFUSED);
  const [, payload = '', signature = ''] = parts;
  if (!key.verifies(SIGNATURE_PURPOSE, signedText(ownerId, payload), signature, SIGNATURE_BYTES)) {
    throw new InputError(LISTING_CURSOR_REFUSED);
  }
  const after = sortKeyOf(payload);
  if (after === null) throw new InputError(LISTING_CURSOR_REFUSED);
  return after;
}

function signedText(ownerId: string, payload: string): string {
  return `${ownerId.toLowerCase()}\0${payload}`;
}

function sortKeyOf(payload: string): SortKey | null {
  const fields = tokenFieldsOf(payload);
  if (fields === null || fields.length !== 2) return null;
  const [createdAt, id] = fields;
  const canonical = typeof id === 'string' ? canonicalId(id) : null;
  return typeof createdAt === 'string' && canonical !== null ? { created_at: createdAt, id: canonical } : null;
}
