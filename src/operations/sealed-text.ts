import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import { SERVICE_KEY_SECRET, ServiceKey } from '../domain/service-key.js';
import type { OAuthStore } from '../store/store.js';

/** Where the service key is read from: the store's secrets. */
export type SecretSource = Pick<OAuthStore, 'secret'>;

const SEALED_PREFIX = 'v1.';
const IV_BYTES = 12;
const TAG_BYTES = 16;
/** Each store's keys, one per purpose, derived once from its service key. */
const sealingKeys = new WeakMap<object, Map<string, Promise<Buffer>>>();

function sealingKeyOf(secrets: SecretSource, purpose: string): Promise<Buffer> {
  let keys = sealingKeys.get(secrets);
  if (keys === undefined) sealingKeys.set(secrets, (keys = new Map()));
  let key = keys.get(purpose);
  if (key === undefined) {
    key = secrets.secret(SERVICE_KEY_SECRET).then((secret) => Buffer.from(new ServiceKey(secret).digest(purpose, '', 32), 'base64url'));
    // A failed read (the database down) is tried again at the next use.
    key.catch(() => keys.delete(purpose));
    keys.set(purpose, key);
  }
  return key;
}

/**
 * Text kept in the database that must not be readable there (a new key in an idempotent answer, a webhook's signing
 * secret): AES-256-GCM under a key derived from the service key for `purpose`, bound to `boundTo` (the row it belongs
 * to), so that a sealed value copied to another row does not open.
 */
export async function sealText(secrets: SecretSource, purpose: string, boundTo: string, text: string): Promise<string> {
  const iv = randomBytes(IV_BYTES);
  const cipher = createCipheriv('aes-256-gcm', await sealingKeyOf(secrets, purpose), iv).setAAD(Buffer.from(boundTo));
  const sealed = Buffer.concat([cipher.update(text, 'utf8'), cipher.final()]);
  return SEALED_PREFIX + Buffer.concat([iv, cipher.getAuthTag(), sealed]).toString('base64url');
}

/** The text sealText sealed for the same purpose and row; throws when it was altered or belongs elsewhere. */
export async function openText(secrets: SecretSource, purpose: string, boundTo: string, stored: string): Promise<string> {
  if (!stored.startsWith(SEALED_PREFIX)) throw new Error(`a stored ${purpose} value is not sealed`);
  const bytes = Buffer.from(stored.slice(SEALED_PREFIX.length), 'base64url');
  const decipher = createDecipheriv('aes-256-gcm', await sealingKeyOf(secrets, purpose), bytes.subarray(0, IV_BYTES)).setAAD(
    Buffer.from(boundTo),
  );
  decipher.setAuthTag(bytes.subarray(IV_BYTES, IV_BYTES + TAG_BYTES));
  return Buffer.concat([decipher.update(bytes.subarray(IV_BYTES + TAG_BYTES)), decipher.final()]).toString('utf8');
}
