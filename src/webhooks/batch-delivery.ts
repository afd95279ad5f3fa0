import type { ChangePosition } from '../domain/changes.js';
import { cursorAfterBatch, GONE_DISABLED_REASON, retentionDisabledReason, retriesExhaustedReason, retryDelay } from '../domain/webhooks.js';
import { readEndpointBatch } from '../operations/change-feed.js';
import type { Store, WebhookDelivery, WebhookRecord } from '../store/store.js';
import type { BatchSender } from './batch-sender.js';
import type { DeliveryLane } from './delivery-lanes.js';
import type { DispatcherLog, DispatcherWarnings } from './dispatcher-warnings.js';
import { iso } from './iso-time.js';
import type { LagMetrics } from './lag-metrics.js';
import type { AttemptOutcome } from './sender.js';

/** Changes read and sent per batch; a batch holds each contact once (the log is compacted), so they go out together. */
const EVENTS_PER_BATCH = 100;

/** A lease the dispatcher holds on an endpoint; `lost` once another process has it (renewal or a write said so). */
export interface Lease {
  lost: boolean;
}

export interface BatchDeliveryOptions {
  store: Pick<Store, 'webhooks' | 'contacts'>;
  sender: BatchSender;
  /** WEBHOOK_RETRY_SCHEDULE, parsed. */
  retrySchedule: readonly number[];
  /** CHANGES_RETENTION_DAYS. */
  retentionDays: number;
  /** Who holds the leases: every write names it, and is refused once the lease is another's. */
  holder: string;
  log: DispatcherLog;
  warnings: DispatcherWarnings;
  lag: LagMetrics | undefined;
  now: () => number;
  random: () => number;
}

/**
 * One batch to one leased endpoint at a time: the changes after its cursor are sent, the cursor moves over those
 * acknowledged, every attempt goes in the deliveries list, and a failure schedules a retry or disables the endpoint.
 */
export class BatchDelivery {
  private readonly retentionMs: number;

  constructor(private readonly options: BatchDeliveryOptions) {
    this.retentionMs = options.retentionDays * 86_400_000;
  }

  /** Returns the endpoint as it stands when more changes wait, or null when its work is over for now. */
  async deliver(endpoint: WebhookRecord, lease: Lease, lane: DeliveryLane): Promise<WebhookRecord | null> {
    const { store, holder } = this.options;
    const { batch, next, currentSeq, pendingSince, pastRetention } = await this.readBatch(endpoint);
    if (pastRetention) {
      await this.disable(endpoint, retentionDisabledReason(this.options.retentionDays));
      return null;
    }
    const attempt = endpoint.failedAttempts + 1;
    const { results, deliveries } = await this.options.sender.send(endpoint, batch, attempt, lane);
    const done = results.findIndex((result) => result.kind !== 'done');
    const doneCount = done === -1 ? batch.length : done;
    const now = this.options.now();
    const moved = cursorAfterBatch(batch, doneCount, next, currentSeq, iso(now));
    // Leased with nothing to send and nothing failed (the log moved on without a change to send): nothing to write.
    const idle = moved !== null && sameCursor(moved.cursor, endpoint.cursor) && endpoint.failedAttempts === 0;
    let held = true;
    if (moved !== null && !idle) {
      held = await store.webhooks.advance(endpoint.id, holder, moved.cursor, moved.pendingSince, iso(now));
    } else if (moved === null && batch.length > 0 && pendingSince !== endpoint.pendingSince) {
      // The first failure after a quiet spell: pendingSince becomes the first change's time (see pendingSinceOf).
      held = await store.webhooks.advance(endpoint.id, holder, endpoint.cursor, pendingSince, iso(now));
    }
    await this.record(deliveries);
    if (!held) {
      lease.lost = true;
      return null;
    }
    const failed = results[doneCount];
    if (failed?.kind === 'failed') {
      await this.failed(endpoint, doneCount > 0 ? 1 : attempt, failed.outcome, now);
      return null;
    }
    if (moved !== null && next === undefined && doneCount === batch.length) this.options.lag?.caughtUp(endpoint.id);
    if (moved === null || next === undefined) return null;
    return { ...endpoint, cursor: moved.cursor, pendingSince: moved.pendingSince, failedAttempts: 0, nextAttemptAt: null };
  }

  /** The batch after the endpoint's cursor, the change after it if any, and whether the log's retention passed the cursor. */
  private async readBatch(endpoint: WebhookRecord) {
    const clock = { now: this.options.now, retentionMs: this.retentionMs };
    const read = await readEndpointBatch(this.options.store.contacts, endpoint, EVENTS_PER_BATCH, clock);
    const { changes: batch, next, pendingSince, pastRetention } = read;
    return { batch, next, currentSeq: read.log.currentSeq, pendingSince, pastRetention };
  }

  /** After a failed attempt: 410 disables at once; otherwise a retry per the schedule, or disabling once it is spent. */
  private async failed(endpoint: WebhookRecord, failedAttempts: number, outcome: AttemptOutcome, now: number): Promise<void> {
    if (outcome.statusCode === 410) return this.disable(endpoint, GONE_DISABLED_REASON);
    const delay = retryDelay(this.options.retrySchedule, failedAttempts, this.options.random);
    if (delay === null) return this.disable(endpoint, retriesExhaustedReason(failedAttempts, outcome.error ?? 'no answer'));
    await this.options.store.webhooks.scheduleRetry(endpoint.id, this.options.holder, failedAttempts, iso(now + delay), iso(now));
  }

  private async disable(endpoint: WebhookRecord, reason: string): Promise<void> {
    const disabled = await this.options.store.webhooks.disable(endpoint.id, this.options.holder, reason, iso(this.options.now()));
    if (disabled) this.options.log.warn({ webhookId: endpoint.id, reason }, 'webhook endpoint disabled');
    this.options.lag?.forget(endpoint.id);
  }

  /** Every attempt of a batch goes in the deliveries list; losing that record to a database error loses no event. */
  private async record(deliveries: readonly WebhookDelivery[]): Promise<void> {
    if (deliveries.length === 0) return;
    await this.options.store.webhooks
      .recordDeliveries(deliveries)
      .catch((error: unknown) => this.options.warnings.warn('record', error, 'could not record webhook delivery attempts'));
  }
}

const sameCursor = (a: ChangePosition, b: ChangePosition) => a.seq === b.seq && a.after === b.after;
