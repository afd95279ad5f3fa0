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
import type { StatementCache } from './statements.js';
import type { SqliteWriteLock } from './transaction.js';

const COLUMNS = columnList(WEBHOOK_COLUMNS);

const INSERT_SQL = `INSERT INTO webhooks (id, owner_id, url, events, description, status, sealed_secret, cursor_seq, cursor_after,
    pending_since, failed_attempts, created_at, updated_at)
  VALUES (@id, @ownerId, @url, @events, @description, 'enabled', @sealedSecret, @cursorSeq, @cursorAfter, @pendingSince, 0, @now, @now)
  RETURNING ${COLUMNS}`;

const UPDATE_SQL = `UPDATE webhooks SET
    url = coalesce(@url, url),
    events = coalesce(@events, events),
    description = CASE WHEN @setDescription THEN @description ELSE description END,
    status = coalesce(@status, status),
    disabled_reason = CASE WHEN @setReason THEN @reason ELSE disabled_reason END,
    failed_attempts = CASE WHEN @clearRetry THEN 0 ELSE failed_attempts END,
    next_attempt_at = CASE WHEN @clearRetry THEN NULL ELSE next_attempt_at END,
    cursor_seq = coalesce(@cursorSeq, cursor_seq),
    cursor_after = CASE WHEN @setCursor THEN @cursorAfter ELSE cursor_after END,
    pending_since = coalesce(@pendingSince, pending_since),
    lease_holder = CASE WHEN @endLease THEN NULL ELSE lease_holder END,
    lease_until = CASE WHEN @endLease THEN NULL ELSE lease_until END,
    updated_at = @now
  WHERE id = @id RETURNING ${COLUMNS}`;

const DUE_FROM = `FROM webhooks w JOIN owner_listing l ON l.owner_id = w.owner_id WHERE ${webhookDueSql('@now')}`;
const ANY_DUE_SQL = `SELECT 1 ${DUE_FROM} LIMIT 1`;
const LEASE_DUE_SQL = `UPDATE webhooks SET lease_holder = @holder, lease_until = @leaseUntil
  WHERE id IN (
    SELECT t.id FROM (${webhookTurnsSql({ now: '@now', holder: '@holder', retrying: '@retrying' })}) t
    WHERE t.turn <= @perOwner ORDER BY ${WEBHOOK_TURN_ORDER} LIMIT @limit)
  RETURNING ${COLUMNS}`;

/** A holder's write applies only while the endpoint's lease is still the holder's (nobody took it over, nobody ended it). */
const HELD = 'id = @id AND lease_holder = @holder';

const INSERT_DELIVERY_SQL = `INSERT INTO webhook_deliveries (${columnList(DELIVERY_COLUMNS)})
  SELECT @webhookId, @eventId, @type, @attempt, @statusCode, @error, @durationMs, @attemptedAt
  WHERE EXISTS (SELECT 1 FROM webhooks WHERE id = @webhookId)`;

export class SqliteWebhookStore implements WebhookStore {
  constructor(
    private readonly statements: StatementCache,
    private readonly writeLock: SqliteWriteLock,
  ) {}

  async create(webhook: NewWebhook): Promise<WebhookRecord> {
    const now = new Date().toISOString();
    const row = await this.writeLock.run(
      () =>
        this.statements.get(INSERT_SQL).get({
          id: parseChosenId(webhook.id),
          ownerId: parseChosenId(webhook.ownerId),
          url: webhook.url,
          events: JSON.stringify(webhook.events),
          description: webhook.description,
          sealedSecret: webhook.sealedSecret,
          cursorSeq: webhook.cursor.seq,
          cursorAfter: webhook.cursor.after,
          pendingSince: webhook.pendingSince,
          now,
        }) as WebhookRow,
    );
    return webhookRecord(row);
  }

  async get(id: string): Promise<WebhookRecord | null> {
    const webhookId = canonicalId(id);
    if (webhookId === null) return null;
    const row = this.statements.get(`SELECT ${COLUMNS} FROM webhooks WHERE id = ?`).get(webhookId) as WebhookRow | undefined;
    return row ? webhookRecord(row) : null;
  }

  async listByOwner(ownerId: string): Promise<WebhookRecord[]> {
    const owner = canonicalId(ownerId);
    if (owner === null) return [];
    const rows = this.statements
      .get(`SELECT ${COLUMNS} FROM webhooks WHERE owner_id = ? ORDER BY created_at, id`)
      .all(owner) as WebhookRow[];
    return rows.map(webhookRecord);
  }

  async update(id: string, changes: WebhookChanges, now: string): Promise<WebhookRecord | null> {
    const webhookId = canonicalId(id);
    if (webhookId === null) return null;
    const values = webhookUpdateValues(changes);
    const row = await this.writeLock.run(
      () =>
        this.statements.get(UPDATE_SQL).get({
          ...values,
          events: values.events === null ? null : JSON.stringify(values.events),
          setDescription: Number(values.setDescription),
          setReason: Number(values.setReason),
          clearRetry: Number(values.clearRetry),
          setCursor: Number(values.setCursor),
          endLease: Number(values.endLease),
          id: webhookId,
          now,
        }) as WebhookRow | undefined,
    );
    return row ? webhookRecord(row) : null;
  }

  async delete(id: string): Promise<boolean> {
    const webhookId = canonicalId(id);
    if (webhookId === null) return false;
    return this.writeLock.run(() => this.statements.get('DELETE FROM webhooks WHERE id = ?').run(webhookId).changes > 0);
  }

  async rotateSecret(id: string, sealedSecret: string, previousUntil: string, now: string): Promise<WebhookRecord | null> {
    const webhookId = canonicalId(id);
    if (webhookId === null) return null;
    const row = await this.writeLock.run(
      () =>
        this.statements
          .get(
            `UPDATE webhooks SET sealed_previous_secret = sealed_secret, sealed_secret = ?, previous_secret_until = ?, updated_at = ?
             WHERE id = ? RETURNING ${COLUMNS}`,
          )
          .get(sealedSecret, previousUntil, now, webhookId) as WebhookRow | undefined,
    );
    return row ? webhookRecord(row) : null;
  }

  /**
   * In one write transaction, so no other process leases the same endpoints. A poll: it looks without the lock first
   * and takes it only when something is due and the lock is free right now, so it never blocks the event loop while
   * another process writes (the next poll tries again).
   */
  async leaseDue(holder: string, now: string, leaseUntil: string, lane: WebhookLeaseLane): Promise<WebhookRecord[]> {
    if (this.statements.get(ANY_DUE_SQL).get({ now }) === undefined) return [];
    let rows: WebhookRow[] = [];
    this.writeLock.runIfFree(() => {
      rows = this.statements
        .get(LEASE_DUE_SQL)
        .all({ holder, now, leaseUntil, limit: lane.limit, perOwner: lane.perOwner, retrying: Number(lane.retrying) }) as WebhookRow[];
    });
    return rows.map(webhookRecord);
  }

  async renewLease(id: string, holder: string, leaseUntil: string): Promise<boolean> {
    return this.held(`UPDATE webhooks SET lease_until = @leaseUntil WHERE ${HELD}`, { id, holder, leaseUntil });
  }

  async releaseLease(id: string, holder: string): Promise<void> {
    await this.held(`UPDATE webhooks SET lease_holder = NULL, lease_until = NULL WHERE ${HELD}`, { id, holder });
  }

  async advance(id: string, holder: string, cursor: ChangePosition, pendingSince: string, now: string): Promise<boolean> {
    return this.held(
      `UPDATE webhooks SET cursor_seq = @seq, cursor_after = @after, pending_since = @pendingSince, failed_attempts = 0,
         next_attempt_at = NULL, updated_at = @now
       WHERE ${HELD}`,
      { id, holder, seq: cursor.seq, after: cursor.after, pendingSince, now },
    );
  }

  async scheduleRetry(id: string, holder: string, failedAttempts: number, nextAttemptAt: string, now: string): Promise<boolean> {
    return this.held(
      `UPDATE webhooks SET failed_attempts = @failedAttempts, next_attempt_at = @nextAttemptAt, updated_at = @now WHERE ${HELD}`,
      { id, holder, failedAttempts, nextAttemptAt, now },
    );
  }

  async disable(id: string, holder: string, reason: string, now: string): Promise<boolean> {
    return this.held(
      `UPDATE webhooks SET status = 'disabled', disabled_reason = @reason, next_attempt_at = NULL, lease_holder = NULL,
         lease_until = NULL, updated_at = @now
       WHERE ${HELD}`,
      { id, holder, reason, now },
    );
  }

  async recordDeliveries(deliveries: readonly WebhookDelivery[]): Promise<void> {
    if (deliveries.length === 0) return;
    const insert = this.statements.get(INSERT_DELIVERY_SQL);
    // An endpoint deleted meanwhile keeps no attempts: they would outlive it.
    await this.writeLock.run(() => {
      for (const delivery of deliveries) insert.run({ ...delivery, webhookId: canonicalId(delivery.webhookId) });
    });
  }

  async listDeliveries(webhookId: string, limit: number): Promise<WebhookDelivery[]> {
    const id = canonicalId(webhookId);
    if (id === null) return [];
    const rows = this.statements
      .get(
        `SELECT ${columnList(DELIVERY_COLUMNS)} FROM webhook_deliveries WHERE webhook_id = ?
         ORDER BY ${DELIVERY_ORDER} LIMIT ?`,
      )
      .all(id, limit) as DeliveryRow[];
    return rows.map(webhookDelivery);
  }

  async pruneDeliveries(before: string, maxRows: number): Promise<number> {
    return this.writeLock.run(
      () =>
        this.statements
          .get(
            `DELETE FROM webhook_deliveries WHERE rowid IN (
               SELECT rowid FROM webhook_deliveries WHERE attempted_at < ? ORDER BY attempted_at LIMIT ?)`,
          )
          .run(before, maxRows).changes,
    );
  }

  async countByStatus(): Promise<Record<WebhookStatus, number>> {
    return countsByStatus(this.statements.get('SELECT status, count(*) AS count FROM webhooks GROUP BY status').all() as never[]);
  }

  private async held(sql: string, values: Record<string, unknown> & { id: string }): Promise<boolean> {
    const webhookId = canonicalId(values.id);
    if (webhookId === null) return false;
    return this.writeLock.run(() => this.statements.get(sql).run({ ...values, id: webhookId }).changes > 0);
  }
}
