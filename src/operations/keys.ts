import { apiKeyStart, generateApiKey, hashApiKey } from '../domain/api-key.js';
import { billingPlanAllowsApiAccess } from '../domain/billing-plan.js';
import { NotFoundError } from '../domain/errors.js';
import type { Scope } from '../domain/scopes.js';
import type { ApiKeyRecord, Store } from '../store/store.js';
import { requireUser } from './users.js';

export type { ApiKeyRecord } from '../store/store.js';

export type KeyStatus = 'active' | 'revoked' | 'expired';

/** A key as a listing shows it: its record (never its secret nor its hash) and whether it works now. */
export type ListedKey = ApiKeyRecord & { status: KeyStatus };

export interface NewKeyRequest {
  /** The owner, by id or email. */
  user: string;
  /** What the key is for; trimmed, blank or absent means none. */
  label?: string | null;
  scopes: readonly Scope[];
  /** How long the key works from now, in milliseconds (parseDuration); null: until revoked. */
  lifetimeMs: number | null;
}

/** A new key: `key` is its plaintext, which exists here only; the store keeps its hash. */
export interface CreatedKey {
  record: ApiKeyRecord;
  key: string;
  /** False while the owner's plan refuses keys: the key is made, and refused (403) until the owner's plan allows it. */
  planAllowsUse: boolean;
}

/** Makes a key `<keyPrefix>_live_…` for the user: the caller shows `key` once; only its hash is stored. */
export async function createKey(store: Pick<Store, 'users' | 'keys'>, keyPrefix: string, request: NewKeyRequest): Promise<CreatedKey> {
  const user = await requireUser(store, request.user);
  const key = generateApiKey(keyPrefix);
  const record = await store.keys.create({
    ownerId: user.id,
    label: request.label?.trim() || null,
    scopes: [...request.scopes],
    secretHash: hashApiKey(key),
    start: apiKeyStart(key),
    expiresAt: request.lifetimeMs === null ? null : new Date(Date.now() + request.lifetimeMs).toISOString(),
  });
  return { record, key, planAllowsUse: billingPlanAllowsApiAccess(user.plan) };
}

/** Every key of the user (id or email), oldest first, with its status now. */
export async function listKeys(store: Pick<Store, 'users' | 'keys'>, user: string): Promise<ListedKey[]> {
  const records = await store.keys.listForOwner((await requireUser(store, user)).id);
  const now = Date.now();
  return records.map((record) => ({ ...record, status: keyStatus(record, now) }));
}

/** Revokes the key (a running server refuses it within a second); revoking again keeps the first time. */
export async function revokeKey(store: Pick<Store, 'keys'>, keyId: string): Promise<ApiKeyRecord> {
  const record = await store.keys.revoke(keyId);
  if (!record) throw new NotFoundError(`No key with id "${keyId}"`);
  return record;
}

export function keyStatus(record: ApiKeyRecord, now: number): KeyStatus {
  if (record.revoked_at !== null) return 'revoked';
  if (record.expires_at !== null && Date.parse(record.expires_at) <= now) return 'expired';
  return 'active';
}
