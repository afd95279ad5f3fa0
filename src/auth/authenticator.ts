import { hashApiKey, isWellFormedApiKey } from '../domain/api-key.js';
import { planAllowsApiAccess } from '../domain/plan.js';
import type { Scope } from '../domain/scopes.js';
import type { KeyStore } from '../store/store.js';

export const INVALID_KEY_MESSAGE = 'Invalid or inactive API key';
export const PRO_PLAN_REQUIRED_MESSAGE = 'API access requires a Pro plan';
/** last_used_at is written at most once per key in this interval. */
export const LAST_USED_RESOLUTION_MS = 60_000;

/** Why authentication failed, for metrics and logs only: a 401 response never says which. */
export type AuthFailureReason = 'missing' | 'malformed' | 'unknown' | 'revoked' | 'expired' | 'scope' | 'plan';

/** Why a request may not proceed: 401 for any key problem (never saying which), 403 for a valid key not allowed. */
export class AuthError extends Error {
  override name = 'AuthError';
  constructor(
    readonly status: 401 | 403,
    message: string,
    readonly reason: AuthFailureReason,
  ) {
    super(message);
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
}

export interface AuthenticatorOptions {
  keys: KeyStore;
  apiKeyPrefix: string;
  now?: () => number;
  /** Called when recording a key's last use fails; the request itself still succeeds. */
  onTouchError?: (error: unknown) => void;
}

const BEARER = /^Bearer[ \t]+(\S+)[ \t]*$/i;

export function extractBearerToken(authorization: string | undefined): string | null {
  return BEARER.exec(authorization ?? '')?.[1] ?? null;
}

export function createAuthenticator(options: AuthenticatorOptions): Authenticator {
  const { keys, apiKeyPrefix, now = Date.now, onTouchError = () => undefined } = options;
  const invalid = (reason: AuthFailureReason) => new AuthError(401, INVALID_KEY_MESSAGE, reason);

  return {
    async authenticate(authorization, scope) {
      if (authorization === undefined) throw invalid('missing');
      const token = extractBearerToken(authorization);
      if (token === null || !isWellFormedApiKey(token, apiKeyPrefix)) throw invalid('malformed');
      const found = await keys.findByHash(hashApiKey(token));
      const at = now();
      if (!found) throw invalid('unknown');
      const { key, ownerPlan } = found;
      if (key.revoked_at !== null) throw invalid('revoked');
      if (key.expires_at !== null && Date.parse(key.expires_at) <= at) throw invalid('expired');
      if (!key.scopes.includes(scope)) throw new AuthError(403, `API key lacks ${scope}`, 'scope');
      if (!planAllowsApiAccess(ownerPlan)) throw new AuthError(403, PRO_PLAN_REQUIRED_MESSAGE, 'plan');

      if (key.last_used_at === null || Date.parse(key.last_used_at) <= at - LAST_USED_RESOLUTION_MS) {
        const cutoff = new Date(at - LAST_USED_RESOLUTION_MS).toISOString();
        keys.touch(key.id, new Date(at).toISOString(), cutoff).catch(onTouchError);
      }
      return { ownerId: key.owner_id, keyId: key.id };
    },
  };
}
