/**
 * One record of the embedded OAuth server (a code, token, grant, client, interaction or session), as src/oauth/ hands it
 * over: every identifier already hashed, the payload JSON without them.
 */
export interface OAuthRecord {
  kind: string;
  idHash: string;
  payload: string;
  grantId: string | null;
  /** The payload's accountId: the id of the API key a grant, code, token or session is bound to. */
  accountId: string | null;
  uidHash: string | null;
  expiresAt: string;
}

/** A stored OAuth record while it has not expired. */
export interface FoundOAuthRecord {
  payload: string;
  consumedAt: string | null;
}

/** The embedded OAuth server's storage: shared by every process, so any worker can finish a flow another began. */
export interface OAuthStore {
  save(record: OAuthRecord): Promise<void>;
  /** The record unless it expired by `now`. */
  find(kind: string, idHash: string, now: string): Promise<FoundOAuthRecord | null>;
  findByUid(kind: string, uidHash: string, now: string): Promise<FoundOAuthRecord | null>;
  /** Marks the record used (a code, a rotated refresh token), keeping the first time. */
  consume(kind: string, idHash: string, at: string): Promise<void>;
  destroy(kind: string, idHash: string): Promise<void>;
  /** Removes every record issued under the grant (its codes and tokens, and the grant itself). */
  revokeGrant(grantId: string): Promise<void>;
  /** The secret stored under `name` (the OAuth migration makes them); throws when there is none. */
  secret(name: string): Promise<string>;
  /** Removes up to `maxRows` records that expired before `before`; returns how many. */
  pruneExpired(before: string, maxRows: number): Promise<number>;
}
