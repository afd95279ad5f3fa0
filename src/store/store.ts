import type { ContactStore, OwnerBatch } from './contracts/contact-store.js';
import type { Dialect } from './contracts/dialect.js';
import type { IdempotencyStore } from './contracts/idempotency-store.js';
import type { KeyStore } from './contracts/key-store.js';
import type { OAuthStore } from './contracts/oauth-store.js';
import type { NewUser, UserStore } from './contracts/user-store.js';
import type { WebhookStore } from './contracts/webhook-store.js';

export type {
  ChangeRead,
  ChangeRecord,
  ContactPage,
  ContactPageJson,
  ContactStore,
  DuplicateEmail,
  FoundContact,
  ImportMatching,
  ImportOutcome,
  ImportRecord,
  ListedContact,
  ListedRead,
  OwnerBatch,
} from './contracts/contact-store.js';
export type { IdempotencyClaim, IdempotencyKey, IdempotencyStore, KeptAnswer } from './contracts/idempotency-store.js';
export type { ApiKeyRecord, KeyRotation, KeyStore, KeyWithOwner, NewApiKey } from './contracts/key-store.js';
export type { FoundOAuthRecord, OAuthRecord, OAuthStore } from './contracts/oauth-store.js';
export type { StoreOptions } from './contracts/store-options.js';
export type { NewUser, User, UserChanges, UserPage, UserStore, UserWithKeyCount } from './contracts/user-store.js';
export type {
  NewWebhook,
  WebhookChanges,
  WebhookDelivery,
  WebhookLeaseLane,
  WebhookRecord,
  WebhookStore,
} from './contracts/webhook-store.js';

export interface Store {
  /** What differs on this store's database. */
  readonly dialect: Dialect;
  readonly users: UserStore;
  readonly keys: KeyStore;
  readonly contacts: ContactStore;
  readonly oauth: OAuthStore;
  readonly idempotency: IdempotencyStore;
  readonly webhooks: WebhookStore;
  /** Applies pending migrations; safe to call from several processes at once. Returns versions applied. */
  migrate(): Promise<number[]>;
  /**
   * Removes change-log rows last changed before `before`, at most `maxRows` of them, and returns how many went.
   * Never waits for a lock: on SQLite it does nothing while another connection writes.
   */
  pruneChanges(before: string, maxRows: number): Promise<number>;
  /**
   * Resolves when the database answers a trivial query (readiness); rejects when it can't, or when the store no
   * longer reads the database its configuration names (detachedReason).
   */
  ping(): Promise<void>;
  /**
   * Why this store reads a database its configuration no longer names, or null: on SQLite, the file it opened was
   * deleted, moved away or replaced, so it serves a file nobody else sees. The process must reopen the store.
   * Absent when that cannot happen (PostgreSQL).
   */
  detachedReason?(): string | null;
  /** The connection pool's use, for metrics; absent when the store has no pool. */
  poolStats?(): PoolStats;
  close(): Promise<void>;
  /**
   * The bulk path for migrations and benchmarks: creates the users that don't exist yet (by email) and imports
   * every batch of contacts, all in one transaction — a bad record anywhere leaves the database unchanged.
   */
  bulkImport(users: readonly NewUser[], batches: AsyncIterable<OwnerBatch>): Promise<{ usersCreated: number; contacts: number }>;
}

export interface PoolStats {
  /** Open connections, busy or idle. */
  total: number;
  idle: number;
  /** Queries waiting for a connection. */
  waiting: number;
}
