import type { BillingPlan } from '../../domain/billing-plan.js';
import type { Scope } from '../../domain/scopes.js';

export interface ApiKeyRecord {
  id: string;
  owner_id: string;
  /** The key's display form (apiKeyStart); null for keys made before it was kept. */
  start: string | null;
  label: string | null;
  scopes: Scope[];
  created_at: string;
  expires_at: string | null;
  last_used_at: string | null;
  revoked_at: string | null;
}

/** A key found by its hash, with what authorization needs to know of its owner. */
export interface KeyWithOwner {
  key: ApiKeyRecord;
  ownerPlan: BillingPlan;
}

export interface NewApiKey {
  ownerId: string;
  label: string | null;
  scopes: Scope[];
  secretHash: string;
  /** The key's display form (apiKeyStart). */
  start: string;
  expiresAt: string | null;
}

/** A key's successor, made by a rotation: the same owner, label and scopes as the key it replaces. */
export interface KeyRotation {
  oldKeyId: string;
  /** The old key expires then, or when it already would if that is sooner. */
  oldExpiresAt: string;
  secretHash: string;
  start: string;
  expiresAt: string | null;
}

export interface KeyStore {
  create(key: NewApiKey): Promise<ApiKeyRecord>;
  listForOwner(ownerId: string): Promise<ApiKeyRecord[]>;
  /**
   * Revokes the key and deletes the OAuth records bound to it (its grants, codes, tokens and sessions), in one
   * transaction; revoking twice keeps the first time. Returns null when no such key exists.
   */
  revoke(keyId: string): Promise<ApiKeyRecord | null>;
  /**
   * In one transaction: creates the successor of a key and makes the old key expire at `oldExpiresAt` (never later
   * than it already would). Null when there is no such key; throws ConflictError when it is revoked.
   */
  rotate(rotation: KeyRotation): Promise<{ replaced: ApiKeyRecord; created: ApiKeyRecord } | null>;
  findByHash(secretHash: string): Promise<KeyWithOwner | null>;
  /** The key with this id and its owner's plan (what an OAuth grant bound to the key checks); null when none. */
  findById(keyId: string): Promise<KeyWithOwner | null>;
  /**
   * Records use of the key unless it was already recorded after `unlessUsedAfter`. Never waits for a lock another
   * connection holds: while one does, the use is kept and written (with its own time) once the lock is free.
   */
  touch(keyId: string, usedAt: string, unlessUsedAfter: string): Promise<void>;
}
