import type { Contact } from './contact.js';
import { InputError, PublicError } from './errors.js';
import { canonicalId } from './ids.js';

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

/** A position handed to a client, bound to the owner and to when it was issued. */
export interface SyncToken extends ChangePosition {
  ownerId: string;
  issuedAt: number;
}

const TOKEN_TEXT = /^([0-9a-f]{32})\.([0-9]{1,15})\.([0-9a-f]{32})?\.([0-9]{1,15})$/;
const hex = (id: string) => id.replaceAll('-', '');
const uuid = (hex32: string) =>
  `${hex32.slice(0, 8)}-${hex32.slice(8, 12)}-${hex32.slice(12, 16)}-${hex32.slice(16, 20)}-${hex32.slice(20)}`;

/** Opaque to clients: base64url of the owner, the position and the issue time. */
export function encodeSyncToken(token: SyncToken): string {
  const text = `${hex(token.ownerId)}.${token.seq}.${token.after === null ? '' : hex(token.after)}.${token.issuedAt}`;
  return Buffer.from(text).toString('base64url');
}

/** Reads `since`; a token that was not issued by this service is refused naming the parameter. */
export function decodeSyncToken(text: string): SyncToken {
  const match = TOKEN_TEXT.exec(Buffer.from(text, 'base64url').toString('latin1'));
  if (!/^[A-Za-z0-9_-]{1,200}$/.test(text) || !match) {
    throw new InputError('Query parameter "since" must be a next_since token this API returned');
  }
  const [, owner = '', seq = '', after, issuedAt = ''] = match;
  return { ownerId: uuid(owner), seq: Number(seq), after: after === undefined ? null : uuid(after), issuedAt: Number(issuedAt) };
}

export interface ChangesRequest {
  since: SyncToken | null;
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
  return { since: query.since === undefined ? null : decodeSyncToken(String(query.since)), limit };
}

/** What the owner's change log holds now: the last seq recorded, and the first from which it is complete. */
export interface ChangeLogState {
  currentSeq: number;
  changesFrom: number;
}

/** Another owner's token is a 400 that reads nothing. */
export function assertTokenOwner(token: SyncToken, ownerId: string): void {
  if (token.ownerId !== canonicalId(ownerId)) {
    throw new InputError('Query parameter "since" is a token of another API key\'s network');
  }
}

/**
 * 410 for a token that cannot be followed: issued longer ago than the retention, from before the log was last
 * complete (TRUNCATE), or ahead of the log (another database's).
 */
export function assertTokenFollowable(token: SyncToken, log: ChangeLogState, retentionMs: number, now: number): void {
  const expired = now - token.issuedAt > retentionMs || token.seq < log.changesFrom || token.seq > log.currentSeq;
  if (expired) throw new PublicError(410, SYNC_TOKEN_EXPIRED_MESSAGE);
}
