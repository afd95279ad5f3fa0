import { createHash } from 'node:crypto';
import { changesLost } from './changes.js';
import { parseDuration } from './duration.js';
import { InputError } from './errors.js';

/** The events a webhook endpoint can subscribe to: one per kind of change in the owner's change log. */
export const WEBHOOK_EVENT_TYPES = ['contact.upserted', 'contact.merged', 'contact.deleted'] as const;
export type WebhookEventType = (typeof WEBHOOK_EVENT_TYPES)[number];

export const WEBHOOK_STATUSES = ['enabled', 'disabled'] as const;
export type WebhookStatus = (typeof WEBHOOK_STATUSES)[number];

/** What a change reports about its contact now (ChangeRecord's state), as far as its event type goes. */
export type ChangedStateKind = 'listable' | 'merged' | 'gone';

const EVENT_TYPE_OF: Record<ChangedStateKind, WebhookEventType> = {
  listable: 'contact.upserted',
  merged: 'contact.merged',
  gone: 'contact.deleted',
};

/** The event a change is delivered as: an upsert, a merge or a delete, as the change feed names them. */
export function webhookEventType(kind: ChangedStateKind): WebhookEventType {
  return EVENT_TYPE_OF[kind];
}

const EVENT_ID_CHARS = 26;

/**
 * The `webhook-id` of one change delivered to one endpoint: the same for every retry and replay of it, so a receiver
 * deduplicates with it, and another for the contact's next change (the log keeps one change per contact, at its seq).
 */
export function webhookEventId(webhookId: string, contactId: string, seq: number): string {
  const digest = createHash('sha256').update(`${webhookId}\0${contactId}\0${seq}`).digest('base64url');
  return `msg_${digest.slice(0, EVENT_ID_CHARS)}`;
}

/** WEBHOOK_RETRY_SCHEDULE's default: the waits after each failed attempt, about 72 hours in all (Standard Webhooks'). */
export const DEFAULT_WEBHOOK_RETRY_SCHEDULE = '5s,5m,30m,2h,5h,10h,14h,20h,24h';
const MAX_RETRIES = 100;

/**
 * The waits before each retry, in milliseconds, from a comma-separated list of durations (`5s,5m,30m`; `50ms` for
 * tests). Throws InputError naming the entry that is not a duration.
 */
export function parseRetrySchedule(text: string): number[] {
  const entries = text.split(',').map((entry) => entry.trim());
  if (entries.length > MAX_RETRIES) throw new InputError(`A retry schedule lists at most ${MAX_RETRIES} waits; got ${entries.length}`);
  return entries.map((entry, index) => {
    if (entry === '')
      throw new InputError(`Retry ${index + 1} of the schedule is empty; list durations separated by commas, like 5s,5m,30m`);
    try {
      return parseDuration(entry, { milliseconds: true });
    } catch (error) {
      throw new InputError(`Retry ${index + 1} of the schedule: ${(error as Error).message}`);
    }
  });
}

/** How far a retry's wait may stray from the schedule, either way, so that endpoints failing together do not retry together. */
export const RETRY_JITTER = 0.2;

/**
 * How long to wait after the `failedAttempts`-th failed attempt in a row (1 for the first), jittered by ±RETRY_JITTER
 * with `random` (uniform in [0, 1)); null once the schedule is spent: the endpoint is then disabled.
 */
export function retryDelay(schedule: readonly number[], failedAttempts: number, random: () => number): number | null {
  const wait = schedule[failedAttempts - 1];
  if (wait === undefined) return null;
  return Math.round(wait * (1 - RETRY_JITTER + 2 * RETRY_JITTER * random()));
}

/**
 * Whether an endpoint has waited too long to be delivered to: its first undelivered change (or the time it was last
 * found caught up, `pendingSince`) is older than the change log keeps changes, or the log is no longer complete from its
 * cursor on (`changesFrom`, moved by a TRUNCATE, is past it). What it missed may be gone: it must resync with the listing.
 */
export function isPastRetention(
  endpoint: { pendingSince: string; cursor: { seq: number } },
  log: { changesFrom: number } | null,
  now: number,
  retentionMs: number,
): boolean {
  return changesLost({ seq: endpoint.cursor.seq, waitingSince: Date.parse(endpoint.pendingSince) }, log, retentionMs, now) !== null;
}

/** Why an endpoint past the retention is disabled: what happened, and how the integrator recovers. */
export function retentionDisabledReason(retentionDays: number): string {
  return (
    `Events waited longer than the change log's retention (${retentionDays} days) and some are gone: ` +
    'resync with the contact listing, then enable the endpoint again (it starts from the current end of the log)'
  );
}

/** Why an endpoint whose last scheduled retry failed is disabled. */
export function retriesExhaustedReason(attempts: number, lastError: string): string {
  return `Retries exhausted: ${attempts} attempts in a row failed (last: ${lastError}); enable the endpoint to resume from where it stopped`;
}

export const GONE_DISABLED_REASON = 'The receiver answered 410 Gone; enable the endpoint to resume from where it stopped';

/** Where an endpoint stands in its owner's change log (ChangePosition), and since when changes wait after it. */
export interface DeliveryState {
  cursor: { seq: number; after: string | null };
  pendingSince: string;
}

/** A change of a batch read after an endpoint's cursor, as far as moving the cursor goes. */
export interface BatchChange {
  seq: number;
  contactId: string;
  changedAt: string;
}

/**
 * Since when changes wait for an endpoint that has not failed yet: `pendingSince` was written when the endpoint was last
 * found caught up, which may be long before its owner wrote again; the first change waiting, read now, is then the
 * closer bound (compaction only ever moves a contact's change later, never loses it). After a failure, pendingSince was
 * written from that first change already.
 */
export function pendingSinceOf(endpoint: { pendingSince: string; failedAttempts: number }, firstWaiting: BatchChange | undefined): string {
  if (endpoint.failedAttempts > 0 || firstWaiting === undefined) return endpoint.pendingSince;
  return Date.parse(firstWaiting.changedAt) > Date.parse(endpoint.pendingSince) ? firstWaiting.changedAt : endpoint.pendingSince;
}

/**
 * Where the cursor goes after a batch: over the longest prefix of `batch` that was acknowledged (2xx) or skipped
 * (`done`), never past a change that was not. Past the whole batch when `next` (the change read after the batch) is
 * absent, the log was read to its end: the cursor is then the log's end (`currentSeq`) and nothing waits since `now`.
 * Otherwise changes wait since the first one left. Null when the cursor does not move.
 */
export function cursorAfterBatch(
  batch: readonly BatchChange[],
  done: number,
  next: BatchChange | undefined,
  currentSeq: number,
  now: string,
): DeliveryState | null {
  if (done >= batch.length && next === undefined) return { cursor: { seq: currentSeq, after: null }, pendingSince: now };
  if (done === 0) return null;
  const last = batch[done - 1]!;
  const firstLeft = done < batch.length ? batch[done]! : next!;
  return { cursor: { seq: last.seq, after: last.contactId }, pendingSince: firstLeft.changedAt };
}
