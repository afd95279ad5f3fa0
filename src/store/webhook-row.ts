import type { WebhookEventType, WebhookStatus } from '../domain/webhooks.js';
import type { WebhookChanges, WebhookDelivery, WebhookRecord } from './contracts/webhook-store.js';

/** The webhooks columns a WebhookRecord carries (never the lease: only the store reads it). */
export const WEBHOOK_COLUMNS = [
  'id',
  'owner_id',
  'url',
  'events',
  'description',
  'status',
  'disabled_reason',
  'sealed_secret',
  'sealed_previous_secret',
  'previous_secret_until',
  'cursor_seq',
  'cursor_after',
  'pending_since',
  'failed_attempts',
  'next_attempt_at',
  'created_at',
  'updated_at',
] as const;

export const DELIVERY_COLUMNS = [
  'webhook_id',
  'event_id',
  'type',
  'attempt',
  'status_code',
  'error',
  'duration_ms',
  'attempted_at',
] as const;

/** A webhooks row as either driver returns it: events are JSON text on SQLite, text[] on PostgreSQL; a bigint is text there. */
export interface WebhookRow {
  id: string;
  owner_id: string;
  url: string;
  events: string | string[];
  description: string | null;
  status: string;
  disabled_reason: string | null;
  sealed_secret: string;
  sealed_previous_secret: string | null;
  previous_secret_until: string | null;
  cursor_seq: number | string;
  cursor_after: string | null;
  pending_since: string;
  failed_attempts: number;
  next_attempt_at: string | null;
  created_at: string;
  updated_at: string;
}

export function webhookRecord(row: WebhookRow): WebhookRecord {
  return {
    id: row.id,
    ownerId: row.owner_id,
    url: row.url,
    events: (typeof row.events === 'string' ? JSON.parse(row.events) : row.events) as WebhookEventType[],
    description: row.description,
    status: row.status as WebhookStatus,
    disabledReason: row.disabled_reason,
    sealedSecret: row.sealed_secret,
    sealedPreviousSecret: row.sealed_previous_secret,
    previousSecretUntil: row.previous_secret_until,
    cursor: { seq: Number(row.cursor_seq), after: row.cursor_after },
    pendingSince: row.pending_since,
    failedAttempts: row.failed_attempts,
    nextAttemptAt: row.next_attempt_at,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  };
}

/** Latest first, read in order from the (webhook_id, attempted_at DESC) index; attempts of one millisecond in any order. */
export const DELIVERY_ORDER = 'attempted_at DESC';

export interface DeliveryRow {
  webhook_id: string;
  event_id: string;
  type: string;
  attempt: number;
  status_code: number | null;
  error: string | null;
  duration_ms: number;
  attempted_at: string;
}

export function webhookDelivery(row: DeliveryRow): WebhookDelivery {
  return {
    webhookId: row.webhook_id,
    eventId: row.event_id,
    type: row.type as WebhookEventType,
    attempt: row.attempt,
    statusCode: row.status_code,
    error: row.error,
    durationMs: row.duration_ms,
    attemptedAt: row.attempted_at,
  };
}

/** Enabled and disabled endpoints from `status, count` rows: a status no endpoint has counts 0. */
export function countsByStatus(rows: readonly { status: string; count: number | string }[]): Record<WebhookStatus, number> {
  const counts: Record<WebhookStatus, number> = { enabled: 0, disabled: 0 };
  for (const row of rows) counts[row.status as WebhookStatus] = Number(row.count);
  return counts;
}

/**
 * The values an update writes, in one place for both databases: a field left out keeps its value (null parameters
 * with a flag per field); enabling clears the reason, the failed attempts and the retry time. A change of status or
 * cursor ends any lease, so a dispatcher delivering from the old state has its next write refused and lets go.
 */
export function webhookUpdateValues(changes: WebhookChanges) {
  const enabling = changes.status === 'enabled';
  return {
    url: changes.url ?? null,
    events: changes.events ?? null,
    setDescription: changes.description !== undefined,
    description: changes.description ?? null,
    status: changes.status ?? null,
    setReason: enabling || changes.disabledReason !== undefined,
    reason: enabling ? null : (changes.disabledReason ?? null),
    clearRetry: enabling,
    cursorSeq: changes.cursor?.seq ?? null,
    setCursor: changes.cursor !== undefined,
    cursorAfter: changes.cursor?.after ?? null,
    pendingSince: changes.pendingSince ?? null,
    endLease: changes.status !== undefined || changes.cursor !== undefined,
  };
}

/**
 * An endpoint the dispatcher may lease at `now` (SQL over `webhooks w` joined with its owner's `owner_listing l`):
 * enabled, no live lease, and work to do: a retry that is due, or, with no retry waiting, changes past the cursor
 * (a later seq, or more of the cursor's own seq when the cursor stopped within it).
 */
export const webhookDueSql = (now: string) => `w.status = 'enabled' AND (w.lease_until IS NULL OR w.lease_until < ${now})
    AND (w.next_attempt_at <= ${now} OR (w.next_attempt_at IS NULL
      AND (l.change_seq > w.cursor_seq OR (l.change_seq = w.cursor_seq AND w.cursor_after IS NOT NULL))))`;

/** An endpoint of the lane `retrying` (SQL, true or false) asks for: a retry waiting, or none. */
const inLane = (table: string, retrying: string) => `(${table}.next_attempt_at IS NOT NULL) = ${retrying}`;

/**
 * The endpoints one lease may take, each with its turn (SQL over `webhooks`, the parameters as SQL): those due at `now`
 * in the lane `retrying`, numbered within their owner, the longest waiting first, after the owner's endpoints `holder`
 * holds in the lane already. Leasing those whose turn is within the owner's share, by turn and then by wait, goes round
 * the owners (each one's first endpoint before anyone's second) and never gives one owner more than its share.
 */
export const webhookTurnsSql = ({ now, holder, retrying }: { now: string; holder: string; retrying: string }) => `SELECT w.id,
    coalesce(held.count, 0) + row_number() OVER (PARTITION BY w.owner_id ORDER BY coalesce(w.next_attempt_at, w.pending_since), w.id)
      AS turn,
    coalesce(w.next_attempt_at, w.pending_since) AS waited
  FROM webhooks w JOIN owner_listing l ON l.owner_id = w.owner_id
    LEFT JOIN (SELECT h.owner_id, count(*) AS count FROM webhooks h
      WHERE h.lease_holder = ${holder} AND h.lease_until >= ${now} AND ${inLane('h', retrying)} GROUP BY h.owner_id) held
    ON held.owner_id = w.owner_id
  WHERE ${webhookDueSql(now)} AND ${inLane('w', retrying)}`;

/** The order a lease takes the turns of webhookTurnsSql in (as `t`). */
export const WEBHOOK_TURN_ORDER = 't.turn, t.waited, t.id';
