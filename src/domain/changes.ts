import type { Contact } from './contact.js';
import { InputError, PublicError } from './errors.js';
import { canonicalId } from './ids.js';
import type { SortKey } from './pagination.js';
import type { ServiceKey } from './service-key.js';
import { tokenFieldsOf } from './token-fields.js';

export const CHANGES_LIMIT_MIN = 1;
export const CHANGES_LIMIT_MAX = 1000;
export const CHANGES_LIMIT_DEFAULT = 100;
export const CHANGES_PARAMETERS = ['since', 'limit'] as const;
export const SYNC_TOKEN_EXPIRED_MESSAGE = 'Sync token expired; list the contacts again';

/** Where a reader of an owner's changes stands: after every change up to `seq`, or within `seq` after contact `after`. */
export interface ChangePosition {
  seq: number;
  after: string | null;
}

export type Change =
  | { type: 'upsert'; id: string; changed_at: string; contact: Contact }
  | { type: 'merge'; id: string; changed_at: string; merged_into: string }
  | { type: 'delete'; id: string; changed_at: string };

/** `since=0`: a walk from nothing, every listable contact as an upsert, then the changes made meanwhile. */
export const SINCE_BEGINNING = '0';

/** A position handed to a client, bound to the owner and to when it was issued. */
export interface SyncToken extends ChangePosition {
  ownerId: string;
  issuedAt: number;
  /**
   * Set while a walk from since=0 sends the listing: the last contact it sent. `seq` is then where the log stood when
   * the walk began (the changes from there follow the listing) and `issuedAt` when it began.
   */
  listedThrough: SortKey | null;
}

/** How a door names its `since` in errors, and what it accepts there. */
export interface SinceParameter {
  name: string;
  accepted: string;
}

/** The REST feed's `since`. */
export const SINCE_QUERY_PARAMETER: SinceParameter = {
  name: 'Query parameter "since"',
  accepted: '0 or a next_since token this API returned',
};

const notAToken = (since: SinceParameter) => `${since.name} must be ${since.accepted}`;
const unsigned = (since: SinceParameter) => `${since.name} carries no signature: pass next_since exactly as this API returned it`;
const altered = (since: SinceParameter) =>
  `${since.name} was altered (its signature does not match): pass next_since exactly as this API returned it`;

const SIGNATURE_PURPOSE = 'sync token';
const SIGNATURE_BYTES = 16;
/** The key's id, the fields as base64url JSON, and their signature (the key's HMAC of the first two). */
const SIGNED_TOKEN = /^([A-Za-z0-9_-]{8})\.([A-Za-z0-9_-]{1,500})(?:\.([A-Za-z0-9_-]*))?$/;
/** Tokens issued before they were signed: base64url of the owner, the position and the issue time, dot-separated. */
const UNSIGNED_TOKEN_TEXT = /^[0-9a-f]{32}\.[0-9]{1,15}\.(?:[0-9a-f]{32})?\.[0-9]{1,15}$/;
const HEX_ID = /^[0-9a-f]{32}$/;
const hex = (id: string) => id.replaceAll('-', '');
const uuid = (hex32: string) =>
  `${hex32.slice(0, 8)}-${hex32.slice(8, 12)}-${hex32.slice(12, 16)}-${hex32.slice(16, 20)}-${hex32.slice(20)}`;

/** Opaque to clients: the owner, the position, the issue time and the walk's place in the listing, signed. */
export function encodeSyncToken(token: SyncToken, key: ServiceKey): string {
  const listed = token.listedThrough;
  const fields = [hex(token.ownerId), token.seq, token.after === null ? '' : hex(token.after), token.issuedAt];
  const payload = Buffer.from(JSON.stringify(listed === null ? fields : [...fields, listed.created_at, hex(listed.id)])).toString(
    'base64url',
  );
  const signed = `${key.id}.${payload}`;
  return `${signed}.${key.digest(SIGNATURE_PURPOSE, signed, SIGNATURE_BYTES)}`;
}

/**
 * Reads `since` (not `0`). 400 for what this API did not issue, or issued and someone edited; 410 for a token signed
 * with another key (another database's) or issued before tokens were signed: the client starts again from since=0.
 */
export function decodeSyncToken(text: string, key: ServiceKey, since: SinceParameter = SINCE_QUERY_PARAMETER): SyncToken {
  const parts = SIGNED_TOKEN.exec(text);
  if (!parts) {
    const beforeSigning =
      /^[A-Za-z0-9_-]{1,200}$/.test(text) && UNSIGNED_TOKEN_TEXT.test(Buffer.from(text, 'base64url').toString('latin1'));
    if (beforeSigning) throw new PublicError(410, SYNC_TOKEN_EXPIRED_MESSAGE);
    throw new InputError(notAToken(since));
  }
  const [, keyId = '', payload = '', signature] = parts;
  if (!signature) throw new InputError(unsigned(since));
  const token = tokenOf(payload);
  // Another key's signature cannot be checked here: a token that reads as one of ours is another database's (410),
  // anything else was never a token (400).
  if (keyId !== key.id) throw token === null ? new InputError(notAToken(since)) : new PublicError(410, SYNC_TOKEN_EXPIRED_MESSAGE);
  if (!key.verifies(SIGNATURE_PURPOSE, `${keyId}.${payload}`, signature, SIGNATURE_BYTES)) throw new InputError(altered(since));
  if (token === null) throw new InputError(notAToken(since));
  return token;
}

/** The fields of a signed token; null when they are not what encodeSyncToken writes. */
function tokenOf(payload: string): SyncToken | null {
  const fields = tokenFieldsOf(payload);
  if (fields === null || (fields.length !== 4 && fields.length !== 6)) return null;
  const [owner, seq, after, issuedAt, createdAt, listedId] = fields;
  const wellFormed =
    typeof owner === 'string' &&
    HEX_ID.test(owner) &&
    Number.isSafeInteger(seq) &&
    (after === '' || (typeof after === 'string' && HEX_ID.test(after))) &&
    Number.isSafeInteger(issuedAt) &&
    (fields.length === 4 || (typeof createdAt === 'string' && typeof listedId === 'string' && HEX_ID.test(listedId)));
  if (!wellFormed) return null;
  return {
    ownerId: uuid(owner),
    seq: seq as number,
    after: after === '' ? null : uuid(after as string),
    issuedAt: issuedAt as number,
    listedThrough: fields.length === 4 ? null : { created_at: createdAt as string, id: uuid(listedId as string) },
  };
}

export interface ChangesRequest {
  /** As given: `0`, a token (decodeSyncToken reads it with the service key), or null for the current position. */
  since: string | null;
  limit: number;
}

const DIGITS = /^[0-9]{1,10}$/;

/** Reads `since` and `limit` strictly: each at most once, `limit` base-10 digits from 1 to 1000, no other parameter. */
export function parseChangesRequest(query: Record<string, unknown>): ChangesRequest {
  for (const name of Object.keys(query)) {
    if (!(CHANGES_PARAMETERS as readonly string[]).includes(name)) {
      throw new InputError(`Unknown query parameter "${name}"; accepted parameters are since and limit`);
    }
  }
  for (const name of CHANGES_PARAMETERS) {
    if (Array.isArray(query[name])) throw new InputError(`Query parameter "${name}" must be given at most once`);
  }
  const limitText = query.limit === undefined ? undefined : String(query.limit);
  const limit = limitText === undefined ? CHANGES_LIMIT_DEFAULT : DIGITS.test(limitText) ? Number(limitText) : Number.NaN;
  if (!(limit >= CHANGES_LIMIT_MIN && limit <= CHANGES_LIMIT_MAX)) {
    throw new InputError(
      `Query parameter "limit" must be a base-10 integer from ${CHANGES_LIMIT_MIN} to ${CHANGES_LIMIT_MAX}; got "${limitText}"`,
    );
  }
  return { since: query.since === undefined ? null : String(query.since), limit };
}

/** What the owner's change log holds now: the last seq recorded, and the first from which it is complete. */
export interface ChangeLogState {
  currentSeq: number;
  changesFrom: number;
}

/** Another owner's token is a 400 that reads nothing. */
export function assertTokenOwner(token: SyncToken, ownerId: string, since: SinceParameter = SINCE_QUERY_PARAMETER): void {
  if (token.ownerId !== canonicalId(ownerId)) {
    throw new InputError(`${since.name} is a token of another API key's network`);
  }
}

/** A date and a time with a zone: what a `since` time accepts (Date.parse alone would read "2026" or "May 1"). */
const ISO_DATE_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(?::\d{2}(?:\.\d{1,9})?)?(?:Z|[+-]\d{2}:\d{2})$/i;

/** Text that starts as a date: meant as a time, never a token (a token starts with its key's id and a dot). */
export const looksLikeTime = (text: string): boolean => /^\d{4}-\d{2}-\d{2}/.test(text);

/**
 * A time to read the change log from (webhooks' `since`, MCP's list_changes): an ISO 8601 date-time with a zone, not
 * in the future, as ms. InputError naming `name` otherwise. How far back the log reaches is the reader's to check.
 */
export function parseChangesTime(name: string, text: string, now: number): number {
  const time = ISO_DATE_TIME.test(text) ? Date.parse(text) : Number.NaN;
  if (Number.isNaN(time)) {
    throw new InputError(
      `${name} must be an ISO 8601 date-time with a time zone, such as 2026-01-31T09:00:00Z; got ${JSON.stringify(text)}`,
    );
  }
  if (time > now) throw new InputError(`${name} must not be in the future; got ${JSON.stringify(text)}`);
  return time;
}

/** The retention (CHANGES_RETENTION_DAYS, in ms) in days, as error messages give it: `30`, or `0.5` in tests. */
export const retentionDays = (retentionMs: number): number => Math.round((retentionMs / 86_400_000) * 100) / 100;

/** Why the log no longer holds every change a reader is owed: kept too briefly, or cut short before its position. */
export type ChangesLost = 'retention' | 'truncated';

/**
 * The one rule for following the change log from a position (a sync token's, a webhook endpoint's cursor): changes have
 * waited for the reader since `waitingSince` (ms) longer than the log keeps them, or the log is no longer complete from
 * `seq` on (`changesFrom`, moved by a TRUNCATE, is past it). Null when every change after `seq` is still there.
 */
export function changesLost(
  reader: { seq: number; waitingSince: number },
  log: { changesFrom: number } | null,
  retentionMs: number,
  now: number,
): ChangesLost | null {
  if (now - reader.waitingSince > retentionMs) return 'retention';
  return log !== null && reader.seq < log.changesFrom ? 'truncated' : null;
}

/**
 * 410 for a token that cannot be followed: issued longer ago than the retention, from before the log was last
 * complete (TRUNCATE), or ahead of the log (another database's).
 */
export function assertTokenFollowable(token: SyncToken, log: ChangeLogState, retentionMs: number, now: number): void {
  const expired =
    changesLost({ seq: token.seq, waitingSince: token.issuedAt }, log, retentionMs, now) !== null || token.seq > log.currentSeq;
  if (expired) throw new PublicError(410, SYNC_TOKEN_EXPIRED_MESSAGE);
}
