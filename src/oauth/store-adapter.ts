import { createHash } from 'node:crypto';
import type { Adapter, AdapterPayload } from 'oidc-provider';
import type { OAuthStore } from '../store/store.js';

/** Records whose id is a bearer credential: the code or token itself. */
const CREDENTIAL_KINDS = new Set([
  'AccessToken',
  'AuthorizationCode',
  'RefreshToken',
  'ClientCredentials',
  'RegistrationAccessToken',
  'InitialAccessToken',
  'DeviceCode',
  'BackchannelAuthenticationRequest',
]);

/**
 * Records oidc-provider keeps without an expiry of their own (registered clients) are kept a day: a client that no user
 * approved within it is gone, so a flood of registrations does not stay. Approval keeps it longer (`keep`).
 */
const UNAPPROVED_CLIENT_SECONDS = 86_400;

/** The SHA-256 of an identifier: what the database keys a code, token, session or interaction by. */
export function hashIdentifier(id: string): string {
  return createHash('sha256').update(id).digest('base64url');
}

/**
 * oidc-provider's storage on the service's own database (SQLite or PostgreSQL), through the store's OAuthStore.
 * Every record is keyed by the hash of its id. A code's or token's id is the credential itself, so its payload is
 * written without its `jti` (that same value) and given it back on read; other records (sessions, interactions,
 * grants, clients) keep theirs, which sessions need when found by uid.
 */
export class StoreAdapter implements Adapter {
  constructor(
    private readonly kind: string,
    private readonly store: OAuthStore,
    private readonly now: () => number = Date.now,
  ) {}

  async upsert(id: string, payload: AdapterPayload, expiresIn: number | undefined): Promise<void> {
    const { jti: _jti, ...withoutId } = payload;
    const stored = CREDENTIAL_KINDS.has(this.kind) ? withoutId : payload;
    const seconds = expiresIn === undefined || expiresIn <= 0 ? UNAPPROVED_CLIENT_SECONDS : expiresIn;
    await this.store.save({
      kind: this.kind,
      idHash: hashIdentifier(id),
      payload: JSON.stringify(stored),
      grantId: payload.grantId ?? null,
      accountId: payload.accountId ?? null,
      uidHash: payload.uid === undefined ? null : hashIdentifier(payload.uid),
      expiresAt: new Date(this.now() + seconds * 1000).toISOString(),
    });
  }

  async find(id: string): Promise<AdapterPayload | undefined> {
    return this.payloadOf(id, await this.store.find(this.kind, hashIdentifier(id), this.nowIso()));
  }

  async findByUid(uid: string): Promise<AdapterPayload | undefined> {
    const found = await this.store.findByUid(this.kind, hashIdentifier(uid), this.nowIso());
    return found === null ? undefined : (JSON.parse(found.payload) as AdapterPayload);
  }

  async findByUserCode(): Promise<AdapterPayload | undefined> {
    // Only the device flow looks records up by user code, and it is not enabled.
    return undefined;
  }

  /** Keeps a record `seconds` from now, unchanged otherwise; nothing happens when there is none (or it expired). */
  async keep(id: string, seconds: number): Promise<void> {
    const found = await this.store.find(this.kind, hashIdentifier(id), this.nowIso());
    if (found !== null) await this.upsert(id, JSON.parse(found.payload) as AdapterPayload, seconds);
  }

  async consume(id: string): Promise<void> {
    await this.store.consume(this.kind, hashIdentifier(id), this.nowIso());
  }

  async destroy(id: string): Promise<void> {
    await this.store.destroy(this.kind, hashIdentifier(id));
  }

  async revokeByGrantId(grantId: string): Promise<void> {
    await this.store.revokeGrant(grantId);
  }

  private payloadOf(id: string, found: { payload: string; consumedAt: string | null } | null): AdapterPayload | undefined {
    if (found === null) return undefined;
    const payload = JSON.parse(found.payload) as AdapterPayload;
    payload.jti = id;
    if (found.consumedAt !== null) payload.consumed = Math.floor(Date.parse(found.consumedAt) / 1000);
    return payload;
  }

  private nowIso(): string {
    return new Date(this.now()).toISOString();
  }
}
