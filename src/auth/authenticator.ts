import { LRUCache } from 'lru-cache';
import { hashApiKey, isWellFormedApiKey } from '../domain/api-key.js';
import { billingPlanAllowsApiAccess } from '../domain/billing-plan.js';
import { PublicError } from '../domain/errors.js';
import type { Scope } from '../domain/scopes.js';
import type { ApiKeyRecord, KeyStore, KeyWithOwner } from '../store/store.js';

export const INVALID_KEY_MESSAGE = 'Invalid or inactive API key';
export const PRO_PLAN_REQUIRED_MESSAGE = 'API access requires a Pro plan';
export const missingScopeMessage = (scope: string): string => `API key lacks ${scope}`;
/** last_used_at is written at most once per key in this interval. */
export const LAST_USED_RESOLUTION_MS = 60_000;

/** Why authentication failed, for metrics and logs only: a 401 response never says which. */
export type AuthFailureReason = 'missing' | 'malformed' | 'unknown' | 'revoked' | 'expired' | 'scope' | 'plan';

/** How a 401 tells the client which credentials to send (RFC 6750). */
export const WWW_AUTHENTICATE = 'Bearer realm="contacts-api"';

/**
 * Why a request may not proceed: 401 for any key problem (never saying which), 403 for a valid key not allowed.
 * `challenge` is the WWW-Authenticate header that goes with it; a 401 always has one.
 */
export class AuthError extends PublicError {
  override name = 'AuthError';
  declare readonly status: 401 | 403;
  constructor(
    status: 401 | 403,
    message: string,
    readonly reason: AuthFailureReason,
    challenge: string | null = status === 401 ? WWW_AUTHENTICATE : null,
  ) {
    super(status, message, challenge === null ? {} : { headers: { 'www-authenticate': challenge } });
  }
}

/** The user a request acts for, as resolved from its key. */
export interface Principal {
  ownerId: string;
  keyId: string;
}

export interface Authenticator {
  /** Resolves an `Authorization` header value to its principal, or throws AuthError. */
  authenticate(authorization: string | undefined, scope: Scope): Promise<Principal>;
  /** The same checks for the key with this id: what an OAuth grant bound to a key goes through on every use. */
  authenticateKeyId(keyId: string, scope: Scope): Promise<Principal>;
}

export interface AuthenticatorOptions {
  keys: KeyStore;
  apiKeyPrefix: string;
  now?: () => number;
  /** Called when recording a key's last use fails; the request itself still succeeds. */
  onTouchError?: (error: unknown) => void;
  /**
   * How long a key lookup (found or not) is reused, in ms; 0 looks every key up on every request. Revocations,
   * expiry edits and plan changes take effect within this bound, which must stay under a second.
   */
  cacheTtlMs?: number;
}

/** Keys remembered at most; a flood of distinct well-formed keys can't grow memory past this. */
const KEY_CACHE_ENTRIES = 10_000;

const BEARER = /^Bearer[ \t]+(\S+)[ \t]*$/i;

export function extractBearerToken(authorization: string | undefined): string | null {
  return BEARER.exec(authorization ?? '')?.[1] ?? null;
}

export function createAuthenticator(options: AuthenticatorOptions): Authenticator {
  const { keys, apiKeyPrefix, now = Date.now, onTouchError = () => undefined, cacheTtlMs = 0 } = options;
  const invalid = (reason: AuthFailureReason) => new AuthError(401, INVALID_KEY_MESSAGE, reason);
  const lookups = new LRUCache<string, { found: KeyWithOwner | null; until: number }>({ max: KEY_CACHE_ENTRIES });
  const lastTouched = new LRUCache<string, number>({ max: KEY_CACHE_ENTRIES });

  const cached = async (cacheKey: string, at: number, find: () => Promise<KeyWithOwner | null>): Promise<KeyWithOwner | null> => {
    const hit = cacheTtlMs > 0 ? lookups.get(cacheKey) : undefined;
    if (hit !== undefined && hit.until > at) return hit.found;
    const found = await find();
    if (cacheTtlMs > 0) lookups.set(cacheKey, { found, until: at + cacheTtlMs });
    return found;
  };

  // Recorded at most once a minute per key: a cached lookup's last_used_at may be stale, so this process
  // also remembers when it last recorded each key.
  const recordUse = (key: ApiKeyRecord, at: number): void => {
    const since = at - LAST_USED_RESOLUTION_MS;
    // The record's own time settles most requests without a second lookup.
    if (key.last_used_at !== null && Date.parse(key.last_used_at) > since) return;
    if ((lastTouched.get(key.id) ?? 0) > since) return;
    lastTouched.set(key.id, at);
    const cutoff = new Date(since).toISOString();
    keys.touch(key.id, new Date(at).toISOString(), cutoff).catch(onTouchError);
  };

  const admit = (found: KeyWithOwner | null, scope: Scope, at: number): Principal => {
    if (!found) throw invalid('unknown');
    const { key, ownerPlan } = found;
    if (key.revoked_at !== null) throw invalid('revoked');
    if (key.expires_at !== null && Date.parse(key.expires_at) <= at) throw invalid('expired');
    if (!key.scopes.includes(scope)) throw new AuthError(403, missingScopeMessage(scope), 'scope');
    if (!billingPlanAllowsApiAccess(ownerPlan)) throw new AuthError(403, PRO_PLAN_REQUIRED_MESSAGE, 'plan');
    recordUse(key, at);
    return { ownerId: key.owner_id, keyId: key.id };
  };

  return {
    async authenticate(authorization, scope) {
      if (authorization === undefined) throw invalid('missing');
      const token = extractBearerToken(authorization);
      if (token === null || !isWellFormedApiKey(token, apiKeyPrefix)) throw invalid('malformed');
      const at = now();
      const hash = hashApiKey(token);
      return admit(await cached(hash, at, () => keys.findByHash(hash)), scope, at);
    },
    async authenticateKeyId(keyId, scope) {
      const at = now();
      return admit(await cached(`id:${keyId}`, at, () => keys.findById(keyId)), scope, at);
    },
  };
}
