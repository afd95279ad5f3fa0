import { parseChangesTime, retentionDays, type ChangePosition } from '../domain/changes.js';
import { ConflictError, InputError, NotFoundError } from '../domain/errors.js';
import { newId } from '../domain/ids.js';
import { checkWebhookUrl } from '../domain/webhook-url.js';
import { WEBHOOK_EVENT_TYPES, WEBHOOK_STATUSES, type WebhookEventType, type WebhookStatus } from '../domain/webhooks.js';
import type { Store, WebhookChanges, WebhookDelivery, WebhookRecord } from '../store/store.js';
import { requireUser, type UserRef } from './users.js';
import { generateWebhookSecret, sealWebhookSecret } from './webhook-secrets.js';

export type { WebhookDelivery, WebhookRecord } from '../store/store.js';

type Webhooks = Pick<Store, 'users' | 'contacts' | 'webhooks' | 'oauth'>;

/** What the deployment allows, from its configuration. */
export interface WebhookPolicy {
  /** WEBHOOKS_ALLOW_PRIVATE_URLS: plain http and non-public hosts are allowed (tests, private deployments). */
  allowPrivate: boolean;
  /** CHANGES_RETENTION_DAYS in milliseconds: how far back the change log (so a start or a replay) can reach. */
  retentionMs: number;
}

/** After a rotation, the previous secret signs beside the new one this long, so receivers rotate without downtime. */
export const PREVIOUS_SECRET_VALIDITY_MS = 24 * 60 * 60 * 1000;
export const DELIVERIES_LIMIT_DEFAULT = 50;
export const DELIVERIES_LIMIT_MAX = 100;
export const WEBHOOK_DESCRIPTION_MAX_LENGTH = 500;
/** The reason an endpoint an administrator disabled shows. */
export const DISABLED_BY_ADMIN = 'disabled by an administrator';

export interface NewWebhookRequest {
  user: UserRef;
  url: string;
  /** The types delivered; every type when absent. */
  events?: readonly string[];
  /** Trimmed; blank or absent means none. */
  description?: string | null;
  /** ISO 8601 time within the retention: changes from then on are delivered. Absent: from now on (no history). */
  since?: string;
}

/** A new endpoint; `secret` (whsec_…) exists here only, the store keeps it sealed. */
export interface CreatedWebhook {
  record: WebhookRecord;
  secret: string;
}

/**
 * Makes an endpoint for the user's changes, enabled, with a new signing secret: its cursor is the current end of the
 * owner's change log, or the position before the first change at or after `since`. InputError for a URL checkWebhookUrl
 * refuses, an unknown event type, a `since` in the future or beyond the retention; NotFoundError for an unknown user.
 */
export async function createWebhook(store: Webhooks, request: NewWebhookRequest, policy: WebhookPolicy): Promise<CreatedWebhook> {
  const url = checkWebhookUrl(request.url, policy).href;
  const events = webhookEvents(request.events ?? WEBHOOK_EVENT_TYPES);
  const description = webhookDescription(request.description);
  const now = Date.now();
  const since = request.since === undefined ? null : timeWithinRetention('since', request.since, policy, now);
  const user = await requireUser(store, request.user);
  const cursor: ChangePosition =
    since === null
      ? { seq: (await store.contacts.changeLog(user.id)).currentSeq, after: null }
      : await positionSince(store, user.id, since);
  const id = newId(now);
  const secret = generateWebhookSecret();
  const record = await store.webhooks.create({
    id,
    ownerId: user.id,
    url,
    events,
    description,
    sealedSecret: await sealWebhookSecret(store.oauth, id, secret),
    cursor,
    pendingSince: since ?? new Date(now).toISOString(),
  });
  return { record, secret };
}

/** The user's endpoints, oldest first; NotFoundError for an unknown user. */
export async function listWebhooks(store: Webhooks, user: UserRef): Promise<WebhookRecord[]> {
  return store.webhooks.listByOwner((await requireUser(store, user)).id);
}

/** NotFoundError when there is no such endpoint (a malformed id names none). */
export async function getWebhook(store: Pick<Store, 'webhooks'>, id: string): Promise<WebhookRecord> {
  const record = await store.webhooks.get(id);
  if (!record) throw noSuchWebhook(id);
  return record;
}

export interface WebhookUpdate {
  url?: string;
  events?: readonly string[];
  /** Trimmed; blank or null means none. */
  description?: string | null;
  status?: WebhookStatus;
}

/**
 * Changes the named fields. Disabling stops deliveries (the reason says an administrator did it). Enabling a disabled
 * endpoint resumes from its cursor, unless changes after it may have left the retention: then it starts from the
 * current end of the log (the integrator resyncs with the listing, docs/webhooks.md). NotFoundError, InputError as
 * createWebhook.
 */
export async function updateWebhook(store: Webhooks, id: string, update: WebhookUpdate, policy: WebhookPolicy): Promise<WebhookRecord> {
  const changes: WebhookChanges = {};
  if (update.url !== undefined) changes.url = checkWebhookUrl(update.url, policy).href;
  if (update.events !== undefined) changes.events = webhookEvents(update.events);
  if (update.description !== undefined) changes.description = webhookDescription(update.description);
  if (update.status !== undefined && !(WEBHOOK_STATUSES as readonly string[]).includes(update.status)) {
    throw new InputError(`status must be "enabled" or "disabled"; got ${JSON.stringify(update.status)}`);
  }
  const record = await getWebhook(store, id);
  const now = Date.now();
  // Only a change of status is written as one: it ends a dispatcher's lease, and enabling clears the retry state.
  if (update.status === 'disabled' && record.status === 'enabled') {
    changes.status = 'disabled';
    changes.disabledReason = DISABLED_BY_ADMIN;
  } else if (update.status === 'enabled' && record.status === 'disabled') {
    changes.status = 'enabled';
    if (now - Date.parse(record.pendingSince) > policy.retentionMs) {
      changes.cursor = { seq: (await store.contacts.changeLog(record.ownerId)).currentSeq, after: null };
      changes.pendingSince = new Date(now).toISOString();
    }
  }
  const updated = await store.webhooks.update(record.id, changes, new Date(now).toISOString());
  if (!updated) throw noSuchWebhook(id);
  return updated;
}

/** Deletes the endpoint and its delivery attempts; NotFoundError when there is none. */
export async function deleteWebhook(store: Pick<Store, 'webhooks'>, id: string): Promise<void> {
  if (!(await store.webhooks.delete(id))) throw noSuchWebhook(id);
}

/**
 * A new signing secret (whsec_…, shown here only). The current one goes on signing beside it for
 * PREVIOUS_SECRET_VALIDITY_MS; a secret rotated before that is dropped. NotFoundError when there is no such endpoint.
 */
export async function rotateWebhookSecret(store: Webhooks, id: string): Promise<{ record: WebhookRecord; secret: string }> {
  const record = await getWebhook(store, id);
  const secret = generateWebhookSecret();
  const now = Date.now();
  const rotated = await store.webhooks.rotateSecret(
    record.id,
    await sealWebhookSecret(store.oauth, record.id, secret),
    new Date(now + PREVIOUS_SECRET_VALIDITY_MS).toISOString(),
    new Date(now).toISOString(),
  );
  if (!rotated) throw noSuchWebhook(id);
  return { record, secret };
}

/** The endpoint's latest attempts first, at most `limit` (1 to 100, 50 by default); NotFoundError, InputError. */
export async function listWebhookDeliveries(
  store: Pick<Store, 'webhooks'>,
  id: string,
  limit: number = DELIVERIES_LIMIT_DEFAULT,
): Promise<WebhookDelivery[]> {
  if (!(Number.isInteger(limit) && limit >= 1 && limit <= DELIVERIES_LIMIT_MAX)) {
    throw new InputError(`limit must be an integer from 1 to ${DELIVERIES_LIMIT_MAX}; got ${limit}`);
  }
  const record = await getWebhook(store, id);
  return store.webhooks.listDeliveries(record.id, limit);
}

/**
 * Delivers again every change from `since` (ISO 8601, within the retention) with its original webhook-id: the cursor
 * moves back to before the first change at or after it (never forward), and a waiting retry is tried at once.
 * ConflictError for a disabled endpoint (enable it first); InputError for a `since` in the future or beyond the retention.
 */
export async function replayWebhook(
  store: Webhooks,
  id: string,
  since: string,
  policy: Pick<WebhookPolicy, 'retentionMs'>,
): Promise<WebhookRecord> {
  const now = Date.now();
  const from = timeWithinRetention('since', since, policy, now);
  const record = await getWebhook(store, id);
  if (record.status !== 'enabled') {
    throw new ConflictError(`Webhook ${record.id} is disabled: enable it (status "enabled"), then replay`);
  }
  const position = await positionSince(store, record.ownerId, from);
  const updated = await store.webhooks.update(
    record.id,
    {
      // Enabling again clears the retry state; with the cursor, it ends a dispatcher's lease on the old position.
      status: 'enabled',
      cursor: earlierPosition(record.cursor, position),
      pendingSince: Date.parse(from) < Date.parse(record.pendingSince) ? from : record.pendingSince,
    },
    new Date(now).toISOString(),
  );
  if (!updated) throw noSuchWebhook(id);
  return updated;
}

/** How far an endpoint is behind its owner's changes. */
export interface WebhookLag {
  /** Contacts whose last change is past the cursor (of every type, subscribed or not). */
  events: number;
  /** Since the oldest of them changed; 0 when none waits. */
  seconds: number;
}

export async function webhookLag(store: Pick<Store, 'contacts'>, record: WebhookRecord, now: number = Date.now()): Promise<WebhookLag> {
  const [events, oldest] = await Promise.all([
    store.contacts.countChangesAfter(record.ownerId, record.cursor),
    store.contacts.readChanges(record.ownerId, record.cursor, 1),
  ]);
  const changedAt = oldest.records[0]?.changedAt;
  return { events, seconds: changedAt === undefined ? 0 : Math.max(0, Math.floor((now - Date.parse(changedAt)) / 1000)) };
}

/** An endpoint as the admin API shows it (snake_case; never a secret). */
export interface WebhookView {
  id: string;
  url: string;
  events: WebhookEventType[];
  description: string | null;
  status: WebhookStatus;
  disabled_reason: string | null;
  lag: WebhookLag;
  created_at: string;
  updated_at: string;
}

export function webhookView(record: WebhookRecord, lag: WebhookLag): WebhookView {
  return {
    id: record.id,
    url: record.url,
    events: record.events,
    description: record.description,
    status: record.status,
    disabled_reason: record.disabledReason,
    lag,
    created_at: record.createdAt,
    updated_at: record.updatedAt,
  };
}

/** A delivery attempt as the admin API lists it. */
export interface WebhookDeliveryView {
  event_id: string;
  type: WebhookEventType;
  attempt: number;
  status_code: number | null;
  error: string | null;
  duration_ms: number;
  attempted_at: string;
}

export function webhookDeliveryView(delivery: WebhookDelivery): WebhookDeliveryView {
  return {
    event_id: delivery.eventId,
    type: delivery.type,
    attempt: delivery.attempt,
    status_code: delivery.statusCode,
    error: delivery.error,
    duration_ms: delivery.durationMs,
    attempted_at: delivery.attemptedAt,
  };
}

const noSuchWebhook = (id: string) => new NotFoundError(`No webhook with id "${id}"`);

/** The types named, once each, in the order of WEBHOOK_EVENT_TYPES; at least one, none unknown. */
function webhookEvents(events: readonly string[]): WebhookEventType[] {
  const known = WEBHOOK_EVENT_TYPES as readonly string[];
  const unknown = events.find((event) => !known.includes(event));
  if (unknown !== undefined) {
    throw new InputError(`events must name only ${WEBHOOK_EVENT_TYPES.join(', ')}; got ${JSON.stringify(unknown)}`);
  }
  if (events.length === 0) throw new InputError(`events must name at least one of ${WEBHOOK_EVENT_TYPES.join(', ')}`);
  return WEBHOOK_EVENT_TYPES.filter((type) => events.includes(type));
}

function webhookDescription(description: string | null | undefined): string | null {
  const trimmed = description?.trim() || null;
  if (trimmed !== null && trimmed.length > WEBHOOK_DESCRIPTION_MAX_LENGTH) {
    throw new InputError(`description must be at most ${WEBHOOK_DESCRIPTION_MAX_LENGTH} characters; got ${trimmed.length}`);
  }
  return trimmed;
}

/** `text` as a canonical ISO time, which must be neither in the future nor older than the change log's retention. */
function timeWithinRetention(name: string, text: string, policy: Pick<WebhookPolicy, 'retentionMs'>, now: number): string {
  const time = parseChangesTime(name, text, now);
  if (now - time > policy.retentionMs) {
    const days = retentionDays(policy.retentionMs);
    throw new InputError(
      `${name} must be within the change log's retention (${days} days); got ${JSON.stringify(text)}: resync with the contact listing instead`,
    );
  }
  return new Date(time).toISOString();
}

/**
 * The position before the first of the owner's changes at or after `since` (positionAt); InputError when a TRUNCATE of
 * contacts cleared the log after it, so a start from there would miss the contacts it removed.
 */
async function positionSince(store: Pick<Store, 'contacts'>, ownerId: string, since: string): Promise<ChangePosition> {
  const position = await store.contacts.positionAt(ownerId, since);
  if (position === null) {
    throw new InputError(
      `since is before the change log was last cleared (contacts were truncated); got ${JSON.stringify(since)}: resync with the contact listing instead`,
    );
  }
  return position;
}

function earlierPosition(a: ChangePosition, b: ChangePosition): ChangePosition {
  if (a.seq !== b.seq) return a.seq < b.seq ? a : b;
  // Within one seq, no `after` is past every contact of it.
  if (a.after === null) return b;
  if (b.after === null) return a;
  return a.after <= b.after ? a : b;
}
