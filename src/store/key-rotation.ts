import { ConflictError } from '../domain/errors.js';
import type { ApiKeyRecord, KeyRotation, NewApiKey } from './contracts/key-store.js';

/** The key a rotation creates: the replaced key's owner, label and scopes, with the rotation's secret and expiry. */
export function successorKey(replaced: ApiKeyRecord, rotation: KeyRotation): NewApiKey {
  return {
    ownerId: replaced.owner_id,
    label: replaced.label,
    scopes: replaced.scopes,
    secretHash: rotation.secretHash,
    start: rotation.start,
    expiresAt: rotation.expiresAt,
  };
}

/** A revoked key stays revoked: rotating it would hand its owner a working key in its place. */
export function revokedKeyConflict(keyId: string): ConflictError {
  return new ConflictError(`Key ${keyId} is revoked and cannot be rotated`);
}
