import { apiKeyStart, generateApiKey, hashApiKey } from '../domain/api-key.js';
import { billingPlanAllowsApiAccess } from '../domain/billing-plan.js';
import { ConflictError, InputError, NotFoundError } from '../domain/errors.js';
import type { Scope } from '../domain/scopes.js';
import type { ApiKeyRecord, Store } from '../store/store.js';
import { requireUser, type UserRef } from './users.js';

export type { ApiKeyRecord } from '../store/store.js';

export type KeyStatus = 'active' | 'revoked' | 'expired';

/** A key as a listing shows it: its record (never its secret nor its hash) and whether it works now. */
export type ListedKey = ApiKeyRecord & { status: KeyStatus };

/**
 * When a new key stops working: after a lifetime from now in milliseconds (parseDuration: the CLI's `--expires-in`),
 * at a time in the future (ISO 8601: the admin API's `expires_at`), or never (null) until revoked.
 */
export type KeyExpiry = { lifetimeMs: number } | { at: string } | null;

export interface NewKeyRequest {
  /** The owner. */
  user: UserRef;
  /** What the key is for; trimmed, blank or absent means none. */
  label?: string | null;
  scopes: readonly Scope[];
  expires: KeyExpiry;
}

/** A new key: `key` is its plaintext, which exists here only; the store keeps its hash. */
export interface CreatedKey {
  record: ApiKeyRecord;
  key: string;
  /** False while the owner's plan refuses keys: the key is made, and refused (403) until the owner's plan allows it. */
  planAllowsUse: boolean;
}

type Keys = Pick<Store, 'users' | 'keys'>;

/** Makes a key `<keyPrefix>_live_…` for the user: the caller shows `key` once; only its hash is stored. */
export async function createKey(store: Keys, keyPrefix: string, request: NewKeyRequest): Promise<CreatedKey> {
  const expiresAt = expiryTime(request.expires, Date.now());
  const user = await requireUser(store, request.user);
  const key = generateApiKey(keyPrefix);
  const record = await store.keys.create({
    ownerId: user.id,
    label: request.label?.trim() || null,
    scopes: [...request.scopes],
    secretHash: hashApiKey(key),
    start: apiKeyStart(key),
    expiresAt,
  });
  return { record, key, planAllowsUse: billingPlanAllowsApiAccess(user.plan) };
}

function expiryTime(expires: KeyExpiry, now: number): string | null {
  if (expires === null) return null;
  if ('lifetimeMs' in expires) return new Date(now + expires.lifetimeMs).toISOString();
  const at = Date.parse(expires.at);
  if (!(at > now)) throw new InputError(`expires_at must be a time in the future; got "${expires.at}"`);
  return new Date(at).toISOString();
}

/** Every key of the user, oldest first, with its status now. */
export async function listKeys(store: Keys, user: UserRef): Promise<ListedKey[]> {
  const records = await store.keys.listForOwner((await requireUser(store, user)).id);
  const now = Date.now();
  return records.map((record) => ({ ...record, status: keyStatus(record, now) }));
}

/** The most a rotated key may go on working beside its successor: a week, in seconds. */
export const MAX_ROTATION_OVERLAP_SECONDS = 604_800;

/** A rotation's successor, and the id of the key it replaces. */
export interface RotatedKey extends CreatedKey {
  replaces: string;
}

/**
 * Makes the key's successor (same owner, label, scopes and expiry time; a new secret, shown once) and lets the old key
 * work `overlapSeconds` more (0 to MAX_ROTATION_OVERLAP_SECONDS), never longer than it already would. NotFoundError
 * when there is no such key; ConflictError when it is revoked or expired: its owner would get a working key back.
 */
export async function rotateKey(store: Keys, keyPrefix: string, request: { keyId: string; overlapSeconds: number }): Promise<RotatedKey> {
  const { keyId, overlapSeconds } = request;
  if (!(Number.isInteger(overlapSeconds) && overlapSeconds >= 0 && overlapSeconds <= MAX_ROTATION_OVERLAP_SECONDS)) {
    throw new InputError(`overlap_seconds must be an integer from 0 to ${MAX_ROTATION_OVERLAP_SECONDS}; got ${overlapSeconds}`);
  }
  const found = await store.keys.findById(keyId);
  if (!found) throw noSuchKey(keyId);
  const now = Date.now();
  if (keyStatus(found.key, now) === 'expired') throw new ConflictError(`Key ${found.key.id} has expired and cannot be rotated`);
  const key = generateApiKey(keyPrefix);
  const rotated = await store.keys.rotate({
    oldKeyId: found.key.id,
    oldExpiresAt: new Date(now + overlapSeconds * 1000).toISOString(),
    secretHash: hashApiKey(key),
    start: apiKeyStart(key),
    expiresAt: found.key.expires_at,
  });
  if (!rotated) throw noSuchKey(keyId);
  return { record: rotated.created, key, planAllowsUse: billingPlanAllowsApiAccess(found.ownerPlan), replaces: rotated.replaced.id };
}

/** Revokes the key and every OAuth grant made with it (a running server refuses them within a second); revoking again keeps the first time. */
export async function revokeKey(store: Pick<Store, 'keys'>, keyId: string): Promise<ApiKeyRecord> {
  const record = await store.keys.revoke(keyId);
  if (!record) throw noSuchKey(keyId);
  return record;
}

const noSuchKey = (keyId: string) => new NotFoundError(`No key with id "${keyId}"`);

export function keyStatus(record: ApiKeyRecord, now: number): KeyStatus {
  if (record.revoked_at !== null) return 'revoked';
  if (record.expires_at !== null && Date.parse(record.expires_at) <= now) return 'expired';
  return 'active';
}
