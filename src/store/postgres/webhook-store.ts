import type pg from 'pg';
import type { ChangePosition } from '../../domain/changes.js';
import { canonicalId, parseChosenId } from '../../domain/ids.js';
import type { WebhookStatus } from '../../domain/webhooks.js';
import { columnList } from '../columns.js';
import type {
  NewWebhook,
  WebhookChanges,
  WebhookDelivery,
  WebhookLeaseLane,
  WebhookRecord,
  WebhookStore,
} from '../contracts/webhook-store.js';
import {
  countsByStatus,
  DELIVERY_COLUMNS,
  DELIVERY_ORDER,
  type DeliveryRow,
  WEBHOOK_COLUMNS,
  WEBHOOK_TURN_ORDER,
  webhookDelivery,
  webhookDueSql,
  webhookRecord,
  type WebhookRow,
  webhookTurnsSql,
  webhookUpdateValues,
} from '../webhook-row.js';
import { pruneOldest } from './prune.js';

const COLUMNS = columnList(WEBHOOK_COLUMNS);
const RETURNED = columnList(WEBHOOK_COLUMNS, 'w');

const INSERT_SQL = `INSERT INTO webhooks (id, owner_id, url, events, description, status, sealed_secret, cursor_seq, cursor_after,
    pending_since, failed_attempts, created_at, updated_at)
  VALUES ($1::uuid, $2::uuid, $3::text, $4::text[], $5::text, 'enabled', $6::text, $7::bigint, $8::uuid, $9::timestamptz, 0,
    $10::timestamptz, $10::timestamptz)
  RETURNING ${COLUMNS}`;

const UPDATE_SQL = `UPDATE webhooks SET
    url = coalesce($2::text, url),
    events = coalesce($3::text[], events),
    description = CASE WHEN $4::boolean THEN $5::text ELSE description END,
    status = coalesce($6::text, status),
    disabled_reason = CASE WHEN $7::boolean THEN $8::text ELSE disabled_reason END,
    failed_attempts = CASE WHEN $9::boolean THEN 0 ELSE failed_attempts END,
    next_attempt_at = CASE WHEN $9::boolean THEN NULL ELSE next_attempt_at END,
    cursor_seq = coalesce($10::bigint, cursor_seq),
    cursor_after = CASE WHEN $11::boolean THEN $12::uuid ELSE cursor_after END,
    pending_since = coalesce($13::timestamptz, pending_since),
    lease_holder = CASE WHEN $14::boolean THEN NULL ELSE lease_holder END,
    lease_until = CASE WHEN $14::boolean THEN NULL ELSE lease_until END,
    updated_at = $15::timestamptz
  WHERE id = $1::uuid RETURNING ${COLUMNS}`;

/**
 * One statement: the due endpoints are locked as they are chosen, and one another process has locked (leasing it
 * now) is skipped rather than waited for. One leased and committed meanwhile is read again at its new version
 * (READ COMMITTED re-checks a locked row against the conditions of the locking level, which repeat the due one),
 * whose live lease excludes it. Only the endpoint rows are locked: the owner_listing rows are the ones every write to
 * the owner's contacts takes.
 */
const LEASE_DUE_SQL = `WITH t AS (${webhookTurnsSql({ now: '$2::timestamptz', holder: '$1::text', retrying: '$5::boolean' })}),
  due AS (
    SELECT w.id FROM webhooks w JOIN owner_listing l ON l.owner_id = w.owner_id JOIN t ON t.id = w.id
    WHERE ${webhookDueSql('$2::timestamptz')} AND t.turn <= $6::int
    ORDER BY ${WEBHOOK_TURN_ORDER} LIMIT $4::int
    FOR UPDATE OF w SKIP LOCKED
  )
  UPDATE webhooks w SET lease_holder = $1::text, lease_until = $3::timestamptz FROM due WHERE w.id = due.id
  RETURNING ${RETURNED}`;

/**
 * Whether any endpoint is enabled, read from webhooks alone: most deployments have none, and a poll then never touches
 * owner_listing, whose locks (a migration's, an operator's) would hold the poll, and a pool connection with it.
 */
const ANY_ENABLED_SQL = "SELECT EXISTS (SELECT 1 FROM webhooks WHERE status = 'enabled') AS any";

/** A holder's write applies only while the endpoint's lease is still the holder's (nobody took it over, nobody ended it). */
const HELD = 'id = $1::uuid AND lease_holder = $2::text';

/** One statement for a batch; an endpoint deleted meanwhile keeps no attempts (they would outlive it). */
const INSERT_DELIVERIES_SQL = `INSERT INTO webhook_deliveries (${columnList(DELIVERY_COLUMNS)})
  SELECT d.* FROM unnest($1::uuid[], $2::text[], $3::text[], $4::int[], $5::int[], $6::text[], $7::int[], $8::timestamptz[])
    AS d (webhook_id, event_id, type, attempt, status_code, error, duration_ms, attempted_at)
  WHERE EXISTS (SELECT 1 FROM webhooks w WHERE w.id = d.webhook_id)`;

export class PostgresWebhookStore implements WebhookStore {
  constructor(private readonly pool: pg.Pool) {}

  async create(webhook: NewWebhook): Promise<WebhookRecord> {
    const { rows } = await this.pool.query<WebhookRow>(INSERT_SQL, [
      parseChosenId(webhook.id),
      parseChosenId(webhook.ownerId),
      webhook.url,
      webhook.events,
      webhook.description,
      webhook.sealedSecret,
      webhook.cursor.seq,
      webhook.cursor.after,
      webhook.pendingSince,
      new Date().toISOString(),
    ]);
    return webhookRecord(rows[0]!);
  }

  async get(id: string): Promise<WebhookRecord | null> {
    const webhookId = canonicalId(id);
    if (webhookId === null) return null;
    const { rows } = await this.pool.query<WebhookRow>(`SELECT ${COLUMNS} FROM webhooks WHERE id = $1::uuid`, [webhookId]);
    return rows[0] ? webhookRecord(rows[0]) : null;
  }

  async listByOwner(ownerId: string): Promise<WebhookRecord[]> {
    const owner = canonicalId(ownerId);
    if (owner === null) return [];
    const { rows } = await this.pool.query<WebhookRow>(
      `SELECT ${COLUMNS} FROM webhooks WHERE owner_id = $1::uuid ORDER BY created_at, id`,
      [owner],
    );
    return rows.map(webhookRecord);
  }

  async update(id: string, changes: WebhookChanges, now: string): Promise<WebhookRecord | null> {
    const webhookId = canonicalId(id);
    if (webhookId === null) return null;
    const v = webhookUpdateValues(changes);
    const { rows } = await this.pool.query<WebhookRow>(UPDATE_SQL, [
      webhookId,
      v.url,
      v.events,
      v.setDescription,
      v.description,
      v.status,
      v.setReason,
      v.reason,
      v.clearRetry,
      v.cursorSeq,
      v.setCursor,
      v.cursorAfter,
      v.pendingSince,
      v.endLease,
      now,
    ]);
    return rows[0] ? webhookRecord(rows[0]) : null;
  }

  async delete(id: string): Promise<boolean> {
    const webhookId = canonicalId(id);
    if (webhookId === null) return false;
    const { rowCount } = await this.pool.query('DELETE FROM webhooks WHERE id = $1::uuid', [webhookId]);
    return rowCount === 1;
  }

  async rotateSecret(id: string, sealedSecret: string, previousUntil: string, now: string): Promise<WebhookRecord | null> {
    const webhookId = canonicalId(id);
    if (webhookId === null) return null;
    const { rows } = await this.pool.query<WebhookRow>(
      `UPDATE webhooks SET sealed_previous_secret = sealed_secret, sealed_secret = $2::text, previous_secret_until = $3::timestamptz,
         updated_at = $4::timestamptz
       WHERE id = $1::uuid RETURNING ${COLUMNS}`,
      [webhookId, sealedSecret, previousUntil, now],
    );
    return rows[0] ? webhookRecord(rows[0]) : null;
  }

  async leaseDue(holder: string, now: string, leaseUntil: string, lane: WebhookLeaseLane): Promise<WebhookRecord[]> {
    const enabled = await this.pool.query<{ any: boolean }>(ANY_ENABLED_SQL);
    if (!enabled.rows[0]?.any) return [];
    const { rows } = await this.pool.query<WebhookRow>(LEASE_DUE_SQL, [holder, now, leaseUntil, lane.limit, lane.retrying, lane.perOwner]);
    return rows.map(webhookRecord);
  }

  async renewLease(id: string, holder: string, leaseUntil: string): Promise<boolean> {
    return this.held(`UPDATE webhooks SET lease_until = $3::timestamptz WHERE ${HELD}`, id, holder, [leaseUntil]);
  }

  async releaseLease(id: string, holder: string): Promise<void> {
    await this.held(`UPDATE webhooks SET lease_holder = NULL, lease_until = NULL WHERE ${HELD}`, id, holder, []);
  }

  async advance(id: string, holder: string, cursor: ChangePosition, pendingSince: string, now: string): Promise<boolean> {
    return this.held(
      `UPDATE webhooks SET cursor_seq = $3::bigint, cursor_after = $4::uuid, pending_since = $5::timestamptz, failed_attempts = 0,
         next_attempt_at = NULL, updated_at = $6::timestamptz
       WHERE ${HELD}`,
      id,
      holder,
      [cursor.seq, cursor.after, pendingSince, now],
    );
  }

  async scheduleRetry(id: string, holder: string, failedAttempts: number, nextAttemptAt: string, now: string): Promise<boolean> {
    return this.held(
      `UPDATE webhooks SET failed_attempts = $3::int, next_attempt_at = $4::timestamptz, updated_at = $5::timestamptz WHERE ${HELD}`,
      id,
      holder,
      [failedAttempts, nextAttemptAt, now],
    );
  }

  async disable(id: string, holder: string, reason: string, now: string): Promise<boolean> {
    return this.held(
      `UPDATE webhooks SET status = 'disabled', disabled_reason = $3::text, next_attempt_at = NULL, lease_holder = NULL,
         lease_until = NULL, updated_at = $4::timestamptz
       WHERE ${HELD}`,
      id,
      holder,
      [reason, now],
    );
  }

  async recordDeliveries(deliveries: readonly WebhookDelivery[]): Promise<void> {
    const valid = deliveries.filter((delivery) => canonicalId(delivery.webhookId) !== null);
    if (valid.length === 0) return;
    const column = <T>(pick: (delivery: WebhookDelivery) => T) => valid.map(pick);
    await this.pool.query(INSERT_DELIVERIES_SQL, [
      column((d) => d.webhookId),
      column((d) => d.eventId),
      column((d) => d.type),
      column((d) => d.attempt),
      column((d) => d.statusCode),
      column((d) => d.error),
      column((d) => d.durationMs),
      column((d) => d.attemptedAt),
    ]);
  }

  async listDeliveries(webhookId: string, limit: number): Promise<WebhookDelivery[]> {
    const id = canonicalId(webhookId);
    if (id === null) return [];
    const { rows } = await this.pool.query<DeliveryRow>(
      `SELECT ${columnList(DELIVERY_COLUMNS)} FROM webhook_deliveries WHERE webhook_id = $1::uuid
       ORDER BY ${DELIVERY_ORDER} LIMIT $2::int`,
      [id, limit],
    );
    return rows.map(webhookDelivery);
  }

  async pruneDeliveries(before: string, maxRows: number): Promise<number> {
    return pruneOldest(this.pool, 'webhook_deliveries', 'attempted_at', before, maxRows);
  }

  async countByStatus(): Promise<Record<WebhookStatus, number>> {
    const { rows } = await this.pool.query<{ status: string; count: string }>(
      'SELECT status, count(*) AS count FROM webhooks GROUP BY status',
    );
    return countsByStatus(rows);
  }

  private async held(sql: string, id: string, holder: string, values: unknown[]): Promise<boolean> {
    const webhookId = canonicalId(id);
    if (webhookId === null) return false;
    const { rowCount } = await this.pool.query(sql, [webhookId, holder, ...values]);
    return rowCount === 1;
  }
}
