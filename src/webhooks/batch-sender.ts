import { webhookEventId, webhookEventType } from '../domain/webhooks.js';
import type { WebhookMetrics } from '../metrics/metrics.js';
import { webhookEventJson } from '../operations/change-json.js';
import type { ChangeRecord, WebhookDelivery, WebhookRecord } from '../store/store.js';
import type { DeliveryLane } from './delivery-lanes.js';
import type { DispatcherWarnings } from './dispatcher-warnings.js';
import { iso } from './iso-time.js';
import type { AttemptOutcome, WebhookSender } from './sender.js';
import type { SigningKeys, WebhookSigner } from './signer.js';

/** What one attempt at one change of a batch came to. */
export type EventResult = { kind: 'done' } | { kind: 'failed'; outcome: AttemptOutcome } | { kind: 'not sent' };

/** A change as it goes out: its id, type and the body it is signed with. */
interface OutgoingEvent {
  record: ChangeRecord;
  id: string;
  type: WebhookRecord['events'][number];
}

export interface BatchSenderOptions {
  sender: WebhookSender;
  signer: WebhookSigner;
  metrics: WebhookMetrics | undefined;
  warnings: DispatcherWarnings;
  now: () => number;
  /** Aborts the attempts in flight (shutdown). */
  shutdown: AbortSignal;
  /** True once shutdown began: no attempt starts after it. */
  stopping: () => boolean;
}

/** Signs and sends the changes of one batch to one endpoint, and notes each attempt for the deliveries list and the metrics. */
export class BatchSender {
  constructor(private readonly options: BatchSenderOptions) {}

  /**
   * Sends the batch's subscribed changes in order, the lane's sendsPerEndpoint at once, starting none after a failure,
   * nor, in a probe, after the first acknowledged.
   */
  async send(
    endpoint: WebhookRecord,
    batch: readonly ChangeRecord[],
    attempt: number,
    lane: DeliveryLane,
  ): Promise<{ results: EventResult[]; deliveries: WebhookDelivery[] }> {
    const { sender, metrics, shutdown } = this.options;
    const results: EventResult[] = batch.map(() => ({ kind: 'not sent' }));
    const deliveries: WebhookDelivery[] = [];
    const outgoing: (OutgoingEvent | null)[] = batch.map((record) => {
      const type = webhookEventType(record.state.kind);
      if (!endpoint.events.includes(type)) return null;
      return { record, type, id: webhookEventId(endpoint.id, record.contactId, record.seq) };
    });
    // Changes the endpoint does not subscribe to are passed over as if acknowledged.
    outgoing.forEach((event, index) => event === null && (results[index] = { kind: 'done' }));
    if (outgoing.every((event) => event === null)) return { results, deliveries };
    let keys: SigningKeys;
    try {
      keys = await this.options.signer.keysFor(endpoint, this.options.now());
    } catch (error) {
      this.options.warnings.warn('secret', error, 'could not open a webhook signing secret');
      const head = outgoing.findIndex((event) => event !== null);
      results[head] = {
        kind: 'failed',
        outcome: { statusCode: null, error: 'The signing secret could not be opened', durationMs: 0, failure: 'connection_error' },
      };
      return { results, deliveries };
    }
    let nextIndex = 0;
    let failedOnce = false;
    let acknowledgedOnce = false;
    const sendNext = async (): Promise<void> => {
      while (nextIndex < outgoing.length && !failedOnce && !(lane.probe && acknowledgedOnce) && !this.options.stopping()) {
        const index = nextIndex;
        nextIndex += 1;
        const event = outgoing[index];
        if (!event) continue;
        const attemptedAt = this.options.now();
        const body = webhookEventJson(event.record);
        const timestamp = new Date(attemptedAt);
        const outcome = await sender.send(
          {
            url: endpoint.url,
            eventId: event.id,
            timestamp: Math.floor(attemptedAt / 1000),
            signature: keys.sign(event.id, timestamp, body),
            body,
          },
          shutdown,
        );
        // An attempt cut short by shutdown says nothing about the receiver: the change is simply sent again later.
        if (shutdown.aborted) return;
        metrics?.deliveries.inc({ outcome: outcome.failure ?? 'success' });
        metrics?.attemptDuration.observe(outcome.durationMs / 1000);
        deliveries.push({
          webhookId: endpoint.id,
          eventId: event.id,
          type: event.type,
          attempt,
          statusCode: outcome.statusCode,
          error: outcome.error,
          durationMs: outcome.durationMs,
          attemptedAt: iso(attemptedAt),
        });
        if (outcome.failure === null) {
          results[index] = { kind: 'done' };
          acknowledgedOnce = true;
        } else {
          results[index] = { kind: 'failed', outcome };
          failedOnce = true;
        }
      }
    };
    await Promise.all(Array.from({ length: Math.min(lane.sendsPerEndpoint, outgoing.length) }, sendNext));
    return { results, deliveries };
  }
}
