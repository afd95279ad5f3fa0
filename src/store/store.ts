import type { ChangeLogState, ChangePosition } from '../domain/changes.js';
import type { Contact } from '../domain/contact.js';
import type { ValidContactInput } from '../domain/contact-input.js';
import type { ImportMatchField, RecordOrigin } from '../domain/import-matching.js';
import type { PageRequest, SortKey } from '../domain/pagination.js';
import type { BillingPlan } from '../domain/billing-plan.js';
import type { Scope } from '../domain/scopes.js';
import type { WebhookEventType, WebhookStatus } from '../domain/webhooks.js';
import type { Dialect } from './dialect.js';

export interface User {
  id: string;
  email: string;
  name: string | null;
  plan: BillingPlan;
  created_at: string;
}

/** A user as `users list` shows it: with how many keys the user has been given, whatever their status. */
export interface UserWithKeyCount extends User {
  keys: number;
}

/** A page of users, oldest first, and how many there are. */
export interface UserPage {
  users: UserWithKeyCount[];
  total: number;
}

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

export interface NewUser {
  /** The caller's own id for the user, a UUID (parseChosenId); a new one is made when absent. */
  id?: string;
  email: string;
  name: string | null;
  plan: BillingPlan;
}

/** What an update changes of a user; a field left out keeps its value. */
export interface UserChanges {
  email?: string;
  name?: string | null;
  plan?: BillingPlan;
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

/**
 * One record of an import, with where it came from (`line 4`, `record 2`) for error messages. The contact has passed
 * normalizeContactInput, so every database stores it as it is.
 */
export interface ImportRecord {
  label: string;
  contact: ValidContactInput;
  /** The export it was read from, when another product's (its contact's `source`, what it is matched on by default). */
  origin?: RecordOrigin;
}

/** What an import did with its records. */
export interface ImportOutcome {
  /** Contacts created. */
  created: number;
  /** Existing contacts with at least one field changed. */
  updated: number;
  /** Records naming existing contacts whose every named field already held the record's value. */
  unchanged: number;
  /** Soft merges the import made (a record's `merged_into`); repeated ones are not counted. */
  merged: number;
  /** Records without id that updated the contact holding their email (matched on `email`). */
  matchedByEmail: number;
  /** Records without id that updated the contact holding their LinkedIn URL (matched on `linkedin_url`). */
  matchedByLinkedinUrl: number;
  /**
   * Records naming an email that another contact already holds, a stored one or one an earlier record wrote: the first
   * IMPORT_LISTED (import-batches.ts) of a streamed import, every one of an import of an array.
   */
  duplicateEmails: DuplicateEmail[];
  /** How many records named such an email. */
  duplicateEmailCount: number;
}

/**
 * What an import does with the emails and LinkedIn URLs its records name, compared by their keys (import-match.ts)
 * among the owner's listable contacts: nothing (`ignore`, the bulk path); else it reports the duplicate emails and
 * matches each record without id on the fields of `match` (none: `[]`), or, without `match`, on its origin's
 * (a LinkedIn export's records: linkedin_url), updating the contact that holds the same value.
 */
export type ImportMatching = 'ignore' | { match?: readonly ImportMatchField[] };

/** A record whose email another contact holds: `sameAs` is `contact <id>` or the label of an earlier record. */
export interface DuplicateEmail {
  label: string;
  email: string;
  sameAs: string;
}

/** The contacts of one owner (email or id) within a bulk load. */
export interface OwnerBatch {
  owner: string;
  records: ImportRecord[];
}

export interface ContactPage {
  contacts: Contact[];
  total: number;
}

/** A contact fetched by id; `mergedFrom` is the id asked for when it had been soft-merged into `contact`. */
export interface FoundContact {
  contact: Contact;
  mergedFrom: string | null;
}

export interface UserStore {
  /**
   * Creates the user and the user's own self row in contacts. Throws ConflictError when the id or the email (ignoring
   * case) is taken, InputError when the id is not a UUID.
   */
  create(user: NewUser): Promise<User>;
  /** Finds a user by id or by email (case-insensitive). */
  find(idOrEmail: string): Promise<User | null>;
  /** Throws NotFoundError when there is no such user. */
  setPlan(userId: string, plan: BillingPlan): Promise<User>;
  /**
   * Changes the named fields (the self row's name and email with them); null when there is no such user. Throws
   * ConflictError when another user holds the email (ignoring case).
   */
  update(userId: string, changes: UserChanges): Promise<User | null>;
  /**
   * Deletes the user and everything that is theirs, in one transaction: keys, contacts, change log, listing state,
   * webhook endpoints, the idempotent answers kept for them, and every OAuth record (grant, code, token, session) bound
   * to one of their keys. False when there is no such user.
   */
  delete(userId: string): Promise<boolean>;
  /** A page of every user, oldest first (created_at, then id). */
  list(page: PageRequest): Promise<UserPage>;
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

/** Every operation takes the owner whose contacts it reads or writes: there is no unscoped access. */
/** A page as the list response's JSON bytes, ready to send, with how many contacts it holds and the owner's total. */
export interface ContactPageJson {
  /** `{"data":[…],"pagination":{…}}`: text, or UTF-8 bytes for a page read often (bytes need no encoding to send). */
  json: string | Buffer;
  returned: number;
  total: number;
  /** The owner's listing version the page belongs to; every write to the owner's contacts changes it. */
  version: number;
}

/** A contact in an owner's change log, with its state now (`json` is its API JSON while it is listable). */
export interface ChangeRecord {
  contactId: string;
  seq: number;
  changedAt: string;
  state: { kind: 'listable'; json: string } | { kind: 'merged'; mergedInto: string } | { kind: 'gone' };
}

/** The owner's change log after a position, read in one snapshot with the log's state. */
export interface ChangeRead {
  log: ChangeLogState;
  records: ChangeRecord[];
}

/** A listable contact as a walk from since=0 sends it: where it sits in the list order, and its API JSON. */
export interface ListedContact {
  key: SortKey;
  updatedAt: string;
  json: string;
}

/** Listable contacts after a sort key, read in one snapshot with the change log's state. */
export interface ListedRead {
  log: ChangeLogState;
  contacts: ListedContact[];
}

export interface ContactStore {
  /** Listable contacts (not merged, not the self row) ordered by created_at, then id. */
  listPage(ownerId: string, page: PageRequest): Promise<ContactPage>;
  /** The same page as listPage, as the list response's JSON (contacts serialized by the database): what the HTTP API sends. */
  listPageJson(ownerId: string, page: PageRequest): Promise<ContactPageJson>;
  /**
   * The owner's listing version, as listPageJson would report it now (from the same cached state), without reading a
   * contact: what a conditional request compares its entity tag with.
   */
  listingVersion(ownerId: string): Promise<number>;
  /**
   * One listable contact of the owner. An id that was soft-merged gives the contact it was merged into.
   * Null alike for an unknown id, another owner's contact, the self row and a malformed (non-UUID) id.
   */
  get(ownerId: string, id: string): Promise<FoundContact | null>;
  /**
   * The owner's listable contacts among `ids`, in list order, as readListed gives them, in one query. Unlike get, a
   * merged id gives nothing; an unknown id, another owner's contact, the self row and a malformed id give nothing
   * alike; an id asked twice comes once. Throws InputError for more than GET_MANY_MAX_IDS (get-many.ts) ids.
   */
  getMany(ownerId: string, ids: readonly string[]): Promise<ListedContact[]>;
  /**
   * Listable contacts in which each word of the query starts a word of the name, email, company, title, school,
   * location or a tag (searchWords: case, Latin accents and punctuation ignored), best first (SearchRank), then in
   * list order. The query is text, never syntax; it is validated by parseSearchRequest (throws InputError).
   */
  search(ownerId: string, query: string, limit: number): Promise<Contact[]>;
  /**
   * Inserts the records, or updates those whose id the owner already has, all in one transaction. A record whose
   * named fields all hold what is stored writes nothing: no updated_at, no change recorded. `matching` says what the
   * records' emails and LinkedIn URLs do (planMatches in import-match.ts); by default nothing. A record with an
   * origin gives a contact it creates its origin's `source`, unless it names one.
   * Throws InputError naming the record when an id belongs to another owner or to the self row.
   */
  importContacts(ownerId: string, records: readonly ImportRecord[], matching?: ImportMatching): Promise<ImportOutcome>;
  /**
   * Imports the batches as importContacts does an array, in one transaction, each batch written before the next is
   * read: its cost does not grow with the number of records (importBatches in import-batches.ts). A record naming an
   * id an earlier one named is refused (InputError naming both); when the batches throw, nothing is imported.
   */
  importBatches(ownerId: string, batches: AsyncIterable<readonly ImportRecord[]>, matching?: ImportMatching): Promise<ImportOutcome>;
  /** Soft-merges `duplicateId` into `survivorId`; both must be the owner's listable contacts. */
  merge(ownerId: string, duplicateId: string, survivorId: string): Promise<void>;
  /**
   * Deletes the owner's contacts (listable or merged), with the duplicates merged into them, in one transaction.
   * Throws InputError naming an id that is not one of the owner's contacts (the self row included); nothing is deleted then.
   */
  delete(ownerId: string, ids: readonly string[]): Promise<number>;
  /** Where the owner's change log stands. */
  changeLog(ownerId: string): Promise<ChangeLogState>;
  /** At most `limit` contacts whose last change comes after `after`, in change order, with the log's state. */
  readChanges(ownerId: string, after: ChangePosition, limit: number): Promise<ChangeRead>;
  /** At most `limit` listable contacts after `after` (from the first when null) in list order, with the log's state. */
  readListed(ownerId: string, after: SortKey | null, limit: number): Promise<ListedRead>;
  /** How many contacts' last change comes after `after` (an endpoint's lag, in events). */
  countChangesAfter(ownerId: string, after: ChangePosition): Promise<number>;
  /**
   * The position just before the first change recorded at or after `time` (a replay's start): reading changes after it
   * gives every contact whose last change was at `time` or later. The log's current position when there is none.
   */
  positionAt(ownerId: string, time: string): Promise<ChangePosition>;
}

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

/** A request's Idempotency-Key, within the operation it was sent to (`POST /admin/v1/users/u1/keys`). */
export interface IdempotencyKey {
  scope: string;
  key: string;
}

/** The answer an Idempotency-Key keeps: its status, its body, and the user it concerns, if any. */
export interface KeptAnswer {
  status: number;
  body: string;
  ownerId: string | null;
}

/**
 * What a claim of an Idempotency-Key found: the key was free (`claimed`: run the request, then complete or release);
 * the request ran already (`replay` its answer); the key came with another request (`mismatch`); or the request is
 * running elsewhere (`in_progress`).
 */
export type IdempotencyClaim =
  { state: 'claimed' } | { state: 'replay'; status: number; body: string } | { state: 'mismatch' } | { state: 'in_progress' };

/**
 * Idempotency-Keys and the answers they gave, shared by every process (Stripe's semantics). A key holds for
 * IDEMPOTENCY_WINDOW_MS from its claim; after that a claim takes it afresh.
 */
export interface IdempotencyStore {
  /**
   * Claims the key for the request whose fingerprint (a hash of method, path and body) is given. Of concurrent claims
   * of a free key exactly one is `claimed`. A claim of the same request made before `staleBefore` and never completed
   * is taken over: the process that made it is presumed gone (a request cannot run that long), and the key would
   * otherwise answer `in_progress` for the rest of its window.
   */
  claim(key: IdempotencyKey, fingerprint: string, now: string, staleBefore?: string): Promise<IdempotencyClaim>;
  /**
   * Keeps the claimed request's answer, for claims to replay. The body is stored as given: an answer holding a secret
   * (a new key) is for the caller to encrypt or leave out. An answer kept for a user (`ownerId`) is deleted with the
   * user, in the user's delete; when that user is gone already (deleted while the request ran), the answer is not
   * kept and the claim is forgotten, as release does.
   */
  complete(key: IdempotencyKey, answer: KeptAnswer, now: string): Promise<void>;
  /** Forgets a claim whose request failed without an answer to keep (a 5xx), so that a retry runs it; never a completed one. */
  release(key: IdempotencyKey): Promise<void>;
  /** Removes up to `maxRows` keys whose window had passed at `now`; returns how many. */
  pruneExpired(now: string, maxRows: number): Promise<number>;
}

/** A webhook endpoint: where an owner's changes are pushed (docs/webhooks.md), and how far it has got. */
export interface WebhookRecord {
  id: string;
  ownerId: string;
  url: string;
  events: WebhookEventType[];
  description: string | null;
  status: WebhookStatus;
  /** Why it is disabled (by the admin, a 410, the last retry, or the change log's retention); null while enabled. */
  disabledReason: string | null;
  /** The signing secret as the store was given it: sealed (encrypted) by src/operations, never plaintext. */
  sealedSecret: string;
  /** The secret before the last rotation, which also signs until `previousSecretUntil`; null when none. */
  sealedPreviousSecret: string | null;
  previousSecretUntil: string | null;
  /** The last change acknowledged (2xx) or skipped: delivery goes on with the changes after it, in change order. */
  cursor: ChangePosition;
  /**
   * Since when changes may wait undelivered: the changed_at of the first change after the cursor, or the time the
   * cursor was last found at the end of the log. Lag in seconds, and the retention check, read it.
   */
  pendingSince: string;
  /** Failed attempts at the change after the cursor (0 when the last attempt succeeded). */
  failedAttempts: number;
  /** When the next attempt is due after a failure; null when nothing waits for a retry. */
  nextAttemptAt: string | null;
  createdAt: string;
  updatedAt: string;
}

export interface NewWebhook {
  /** Made by the caller (newId), which seals the secret bound to it. */
  id: string;
  ownerId: string;
  url: string;
  events: WebhookEventType[];
  description: string | null;
  sealedSecret: string;
  cursor: ChangePosition;
  pendingSince: string;
}

/** What an update changes of an endpoint; a field left out keeps its value. */
export interface WebhookChanges {
  url?: string;
  events?: WebhookEventType[];
  description?: string | null;
  /** Enabling clears the reason, the failed attempts and the retry time; `cursor` and `pendingSince` move it. */
  status?: WebhookStatus;
  disabledReason?: string | null;
  cursor?: ChangePosition;
  pendingSince?: string;
}

/** One attempt to deliver one event to one endpoint, as the deliveries list shows it. */
export interface WebhookDelivery {
  webhookId: string;
  eventId: string;
  type: WebhookEventType;
  /** 1 for the first attempt at this event, 2 for its first retry, … */
  attempt: number;
  /** The receiver's HTTP status; null when none came (timeout, refused connection, refused address). */
  statusCode: number | null;
  /** Why the attempt failed, short and without the response body; null for a 2xx. */
  error: string | null;
  durationMs: number;
  attemptedAt: string;
}

/** Which endpoints a lease takes, and how many (WebhookStore.leaseDue). */
export interface WebhookLeaseLane {
  /** Endpoints whose retry is due (true), or endpoints with changes past the cursor and no retry waiting (false). */
  retrying: boolean;
  limit: number;
  /** The most endpoints of one owner the holder may hold in the lane at once, counting those it holds already. */
  perOwner: number;
}

/**
 * Webhook endpoints and their delivery state, shared by every process. A dispatcher leases the endpoints it delivers
 * to: while a lease holds, no other process (or instance, on PostgreSQL: FOR UPDATE SKIP LOCKED) leases that endpoint,
 * and the holder's writes to the endpoint's delivery state are refused once its lease is gone (returns false).
 */
export interface WebhookStore {
  create(webhook: NewWebhook): Promise<WebhookRecord>;
  /** Null for an unknown or malformed id. */
  get(id: string): Promise<WebhookRecord | null>;
  /** The owner's endpoints, oldest first. */
  listByOwner(ownerId: string): Promise<WebhookRecord[]>;
  /**
   * Null when there is no such endpoint. A change of status or cursor ends any lease, so that a dispatcher delivering
   * from the old state has its next write refused.
   */
  update(id: string, changes: WebhookChanges, now: string): Promise<WebhookRecord | null>;
  /** Deletes the endpoint and its delivery attempts; false when there was none. */
  delete(id: string): Promise<boolean>;
  /** The new secret signs from now; the current one becomes the previous one until `previousUntil`. */
  rotateSecret(id: string, sealedSecret: string, previousUntil: string, now: string): Promise<WebhookRecord | null>;
  /**
   * Leases for `holder` until `leaseUntil` enabled endpoints of `lane` that have work and no live lease: their owner's
   * change log has moved past their cursor and no retry waits, or (the retrying lane) their retry is due
   * (nextAttemptAt <= now). Endpoints waiting for a retry not yet due are not leased. At most `lane.limit`, and of one
   * owner only as many as bring the endpoints of that owner the holder holds in the lane to `lane.perOwner`; taken
   * round the owners (every owner's longest waiting endpoint before any owner's second), then the longest waiting
   * first. A poll: on SQLite it leases nothing while another connection holds the write lock (it never waits for it),
   * and the next poll tries again.
   */
  leaseDue(holder: string, now: string, leaseUntil: string, lane: WebhookLeaseLane): Promise<WebhookRecord[]>;
  /** Extends the holder's lease; false when it no longer holds it. */
  renewLease(id: string, holder: string, leaseUntil: string): Promise<boolean>;
  releaseLease(id: string, holder: string): Promise<void>;
  /** Moves the cursor past acknowledged (or skipped) changes and clears failedAttempts and nextAttemptAt. */
  advance(id: string, holder: string, cursor: ChangePosition, pendingSince: string, now: string): Promise<boolean>;
  /** Records a failed attempt at the change after the cursor: the count and when to try again. */
  scheduleRetry(id: string, holder: string, failedAttempts: number, nextAttemptAt: string, now: string): Promise<boolean>;
  /** Disables the endpoint with its reason (a 410, the last retry, the retention) and ends the lease. */
  disable(id: string, holder: string, reason: string, now: string): Promise<boolean>;
  /** Keeps the attempts, in one transaction; those of an endpoint deleted meanwhile are dropped. */
  recordDeliveries(deliveries: readonly WebhookDelivery[]): Promise<void>;
  /** The endpoint's latest attempts first. */
  listDeliveries(webhookId: string, limit: number): Promise<WebhookDelivery[]>;
  /** Removes up to `maxRows` attempts made before `before`; returns how many. */
  pruneDeliveries(before: string, maxRows: number): Promise<number>;
  /** Enabled and disabled endpoints, for the metrics. */
  countByStatus(): Promise<Record<WebhookStatus, number>>;
}

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

/** How the server opens a store; the CLI opens stores without these limits (imports may run long). */
/** PostgreSQL connections per process, and statements that may wait for one (StoreOptions.pool). */
export const DEFAULT_POOL = { size: 3, queueLimit: 64 } as const;

export interface StoreOptions {
  /**
   * How long one statement may take: PostgreSQL's statement_timeout (unset: no limit) and SQLite's
   * busy_timeout, the wait for another connection's write lock (unset: 5 s).
   */
  statementTimeoutMs?: number;
  /**
   * Set by the administrative commands: on SQLite, where one process writes at a time, a write waits for another
   * process's write as long as it takes instead of failing after the busy timeout, and this is called once with a
   * line to show when a wait passes 2 s. PostgreSQL writers wait for row locks anyway, and are not told.
   */
  onLongLockWait?: (notice: string) => void;
  /**
   * How long a listing reuses an owner's count and version before asking the database again (unset: 0, ask on
   * every page). Contact changes become visible to listings within this bound.
   */
  listingStateTtlMs?: number;
  /**
   * PostgreSQL only: connections a process keeps (unset: 3), and how many statements may wait for one before the next
   * is refused at once with a 503 (unset: 64). On a few cores, few connections answer faster than many: PostgreSQL's
   * processes then compete with the server's for the CPU. A statement that would wait behind a full queue could not
   * be answered in time anyway; refusing it says so in a millisecond instead of holding the request.
   */
  pool?: { size: number; queueLimit: number };
  /**
   * SQLite only: open the database file only if it exists, never creating it or its folder (the server and every
   * command do this, but `migrate` and `demo`, which create). PostgreSQL never creates a database.
   */
  mustExist?: boolean;
}
