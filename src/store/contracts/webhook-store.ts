import type { ChangePosition } from '../../domain/changes.js';
import type { WebhookEventType, WebhookStatus } from '../../domain/webhooks.js';

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
