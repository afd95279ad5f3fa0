import { randomBytes } from 'node:crypto';
import { setMaxListeners } from 'node:events';
import { hostname } from 'node:os';
import type { ChangePosition } from '../domain/changes.js';
import {
  cursorAfterBatch,
  GONE_DISABLED_REASON,
  isPastRetention,
  pendingSinceOf,
  retentionDisabledReason,
  retriesExhaustedReason,
  retryDelay,
  webhookEventId,
  webhookEventType,
} from '../domain/webhooks.js';
import type { WebhookMetrics } from '../metrics/metrics.js';
import { webhookEventJson } from '../operations/change-json.js';
import type { ChangeRecord, Store, WebhookDelivery, WebhookRecord } from '../store/store.js';
import { ThrottledWarning } from '../throttled-warning.js';
import type { AttemptOutcome, WebhookSender } from './sender.js';
import type { SigningKeys, WebhookSigner } from './signer.js';

/** How often the dispatcher looks for endpoints with work: the usual delay between a write and its first attempt. */
export const WEBHOOK_POLL_MS = 250;
/**
 * A lease's length, renewed every LEASE_RENEW_MS while the endpoint is worked on: how long the endpoints of a process
 * that died (SIGKILL, power loss) wait before another process takes them over.
 */
const LEASE_MS = 15_000;
const LEASE_RENEW_MS = 5_000;
/**
 * A share of a process's delivery slots (docs/webhooks.md, "Fair shares"). An endpoint with changes to send and no failure
 * waiting is delivered to in the current lane; one whose retry is due, in the retrying lane, a small one of its own:
 * endpoints that keep failing, however many, hold only its slots. In each lane one owner holds at most `perOwner`
 * endpoints of a process, and a lease goes round the owners, so that no owner waits behind another's timeouts.
 */
interface DeliveryLane {
  retrying: boolean;
  /** Endpoints of the lane a process works on at once. */
  endpoints: number;
  /** Of those, at most this many of one owner. */
  perOwner: number;
  /** Attempts in flight to one endpoint at once. */
  sendsPerEndpoint: number;
  /**
   * True: the lease ends with the first attempt acknowledged (a probe: the endpoint answers again, and its next lease
   * is in the current lane). False: batch after batch, for up to TURN_MS.
   */
  probe: boolean;
}

const CURRENT_LANE: DeliveryLane = { retrying: false, endpoints: 16, perOwner: 4, sendsPerEndpoint: 4, probe: false };
const RETRYING_LANE: DeliveryLane = { retrying: true, endpoints: 4, perOwner: 1, sendsPerEndpoint: 1, probe: true };
const LANES = [CURRENT_LANE, RETRYING_LANE];
/** Changes read and sent per batch; a batch holds each contact once (the log is compacted), so they go out together. */
const EVENTS_PER_BATCH = 100;
/** How long one endpoint is worked on before its lease is given back, so that every endpoint with work gets its turn. */
const TURN_MS = 10_000;
/** The longest wait between polls while the database fails. */
const MAX_BACKOFF_MS = 5_000;
const METRICS_REFRESH_MS = 15_000;
/** An endpoint not leased for this long leaves this process's lag metrics (another process may deliver it now). */
const LAG_FORGET_MS = 3_600_000;
const WARNING_INTERVAL_MS = 10_000;

export interface DispatcherLog {
  info(details: object, message: string): void;
  warn(details: object, message: string): void;
}

export interface DispatcherOptions {
  store: Pick<Store, 'webhooks' | 'contacts'>;
  sender: WebhookSender;
  signer: WebhookSigner;
  /** WEBHOOK_RETRY_SCHEDULE, parsed. */
  retrySchedule: readonly number[];
  /** CHANGES_RETENTION_DAYS. */
  retentionDays: number;
  log: DispatcherLog;
  metrics?: WebhookMetrics;
  /** Who holds this process's leases; unique per dispatcher. */
  holder?: string;
  now?: () => number;
  random?: () => number;
}

/** What one attempt at one change of a batch came to. */
type EventResult = { kind: 'done' } | { kind: 'failed'; outcome: AttemptOutcome } | { kind: 'not sent' };

/** A change as it goes out: its id, type and the body it is signed with. */
interface OutgoingEvent {
  record: ChangeRecord;
  id: string;
  type: WebhookRecord['events'][number];
}

/**
 * Pushes each owner's changes to their webhook endpoints (docs/webhooks.md). Every WEBHOOK_POLL_MS it leases the
 * endpoints that have work (a lease keeps other processes off them), as many as each DeliveryLane has room for, and
 * delivers to each in batches read after the endpoint's cursor: the cursor moves only over changes a receiver acknowledged,
 * so a process that dies loses nothing, and another takes its endpoints once their leases run out. A failing database
 * is logged sparingly and waited out; nothing here throws.
 */
export class WebhookDispatcher {
  private readonly holder: string;
  private readonly now: () => number;
  private readonly random: () => number;
  private readonly retentionMs: number;
  /** The endpoints being delivered to, by lane: id → the work. */
  private readonly working = new Map(LANES.map((lane) => [lane, new Map<string, Promise<void>>()]));
  /** Endpoints this process delivered to lately, whose lag it reports: id → last leased at. */
  private readonly reported = new Map<string, number>();
  private readonly aborter = new AbortController();
  private readonly warnings = new Map<string, ThrottledWarning>();
  private pollTimer: NodeJS.Timeout | undefined;
  private metricsTimer: NodeJS.Timeout | undefined;
  private failuresInARow = 0;
  private stopping = false;
  private polling: Promise<void> = Promise.resolve();

  constructor(private readonly options: DispatcherOptions) {
    this.holder = options.holder ?? `${hostname()}:${process.pid}:${randomBytes(4).toString('hex')}`;
    this.now = options.now ?? Date.now;
    this.random = options.random ?? Math.random;
    this.retentionMs = options.retentionDays * 86_400_000;
    // Every attempt in flight listens for the one shutdown signal: hundreds at once is no leak.
    setMaxListeners(0, this.aborter.signal);
  }

  start(): this {
    this.schedulePoll(0);
    if (this.options.metrics) this.scheduleMetrics(0);
    return this;
  }

  /**
   * Stops leasing, lets the attempts in flight finish for up to `timeoutMs`, then aborts what is left (those changes are
   * sent again later: the cursor never passed them), and gives the leases back.
   */
  async stop(timeoutMs: number): Promise<void> {
    if (this.stopping) return;
    this.stopping = true;
    clearTimeout(this.pollTimer);
    clearTimeout(this.metricsTimer);
    await this.polling;
    const settled = Promise.all([...this.working.values()].flatMap((works) => [...works.values()]));
    let timer: NodeJS.Timeout | undefined;
    const overran = await Promise.race([
      settled.then(() => false),
      new Promise<boolean>((resolve) => (timer = setTimeout(() => resolve(true), timeoutMs))),
    ]);
    clearTimeout(timer);
    if (overran) {
      this.aborter.abort();
      // Aborted attempts settle at once; what is left is writing the cursors and giving the leases back.
      await Promise.race([settled, new Promise((resolve) => setTimeout(resolve, 1000).unref())]);
    }
    this.options.sender.close();
  }

  private schedulePoll(delayMs: number): void {
    if (this.stopping) return;
    this.pollTimer = setTimeout(() => {
      this.polling = this.poll().finally(() => {
        const backoff = this.failuresInARow === 0 ? WEBHOOK_POLL_MS : Math.min(MAX_BACKOFF_MS, WEBHOOK_POLL_MS * 2 ** this.failuresInARow);
        this.schedulePoll(backoff);
      });
    }, delayMs);
    // The server's listeners keep the process alive; the dispatcher alone never does.
    this.pollTimer.unref();
  }

  private async poll(): Promise<void> {
    for (const [lane, works] of this.working) {
      const room = lane.endpoints - works.size;
      if (room <= 0) continue;
      const now = this.now();
      let leased: WebhookRecord[];
      try {
        leased = await this.options.store.webhooks.leaseDue(this.holder, iso(now), iso(now + LEASE_MS), {
          retrying: lane.retrying,
          limit: room,
          perOwner: lane.perOwner,
        });
        this.failuresInARow = 0;
      } catch (error) {
        this.failuresInARow += 1;
        return this.warn('lease', error, 'could not look for webhook endpoints with work; trying again');
      }
      for (const endpoint of leased) {
        if (works.has(endpoint.id)) continue;
        this.reported.set(endpoint.id, now);
        works.set(
          endpoint.id,
          this.work(endpoint, lane).finally(() => works.delete(endpoint.id)),
        );
      }
    }
  }

  /**
   * Delivers to one leased endpoint until it has no work left, fails, loses its lease, or its turn ends (a probe's after
   * one batch); never rejects.
   */
  private async work(leased: WebhookRecord, lane: DeliveryLane): Promise<void> {
    const lease = { lost: false };
    const renewing = this.renewWhileWorking(leased.id, lease);
    const turnEnds = this.now() + TURN_MS;
    let endpoint: WebhookRecord | null = leased;
    try {
      do {
        endpoint = await this.deliverBatch(endpoint, lease, lane);
      } while (endpoint !== null && !lane.probe && !this.stopping && !lease.lost && this.now() < turnEnds);
    } catch (error) {
      this.warn('deliver', error, 'webhook delivery failed on a database error; the endpoint is tried again');
    } finally {
      renewing.stop();
      await this.options.store.webhooks
        .releaseLease(leased.id, this.holder)
        .catch((error: unknown) => this.warn('release', error, 'could not release a webhook lease; it runs out in 15 s'));
    }
  }

  private renewWhileWorking(id: string, lease: { lost: boolean }): { stop(): void } {
    const timer = setInterval(() => {
      const now = this.now();
      this.options.store.webhooks.renewLease(id, this.holder, iso(now + LEASE_MS)).then(
        (held) => {
          if (!held) lease.lost = true;
        },
        (error: unknown) => this.warn('renew', error, 'could not renew a webhook lease; trying again'),
      );
    }, LEASE_RENEW_MS).unref();
    return { stop: () => clearInterval(timer) };
  }

  /**
   * One batch: the changes after the cursor, sent as the lane says; the cursor moves over those acknowledged; a
   * failure schedules a retry or disables the endpoint. Returns the endpoint as it stands when more changes wait, or
   * null when its work is over for now.
   */
  private async deliverBatch(endpoint: WebhookRecord, lease: { lost: boolean }, lane: DeliveryLane): Promise<WebhookRecord | null> {
    const { store } = this.options;
    const read = await store.contacts.readChanges(endpoint.ownerId, endpoint.cursor, EVENTS_PER_BATCH + 1);
    const batch = read.records.slice(0, EVENTS_PER_BATCH);
    const next = read.records[EVENTS_PER_BATCH];
    const startedAt = this.now();
    // Nothing waiting is nothing lost to the retention (a TRUNCATE past the cursor still is: changesFrom says so).
    const pendingSince = batch.length === 0 ? iso(startedAt) : pendingSinceOf(endpoint, batch[0]);
    if (isPastRetention({ pendingSince, cursor: endpoint.cursor }, read.log, startedAt, this.retentionMs)) {
      await this.disable(endpoint, retentionDisabledReason(this.options.retentionDays));
      return null;
    }
    const attempt = endpoint.failedAttempts + 1;
    const { results, deliveries } = await this.sendBatch(endpoint, batch, attempt, lane);
    const done = results.findIndex((result) => result.kind !== 'done');
    const doneCount = done === -1 ? batch.length : done;
    const now = this.now();
    const moved = cursorAfterBatch(batch, doneCount, next, read.log.currentSeq, iso(now));
    // Leased with nothing to send and nothing failed (the log moved on without a change to send): nothing to write.
    const idle = moved !== null && sameCursor(moved.cursor, endpoint.cursor) && endpoint.failedAttempts === 0;
    let held = true;
    if (moved !== null && !idle) {
      held = await store.webhooks.advance(endpoint.id, this.holder, moved.cursor, moved.pendingSince, iso(now));
    } else if (moved === null && batch.length > 0 && pendingSince !== endpoint.pendingSince) {
      // The first failure after a quiet spell: pendingSince becomes the first change's time (see pendingSinceOf).
      held = await store.webhooks.advance(endpoint.id, this.holder, endpoint.cursor, pendingSince, iso(now));
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
    if (moved !== null) this.reportCaughtUp(endpoint.id, next === undefined && doneCount === batch.length);
    if (moved === null || next === undefined) return null;
    return { ...endpoint, cursor: moved.cursor, pendingSince: moved.pendingSince, failedAttempts: 0, nextAttemptAt: null };
  }

  /**
   * Sends the batch's subscribed changes in order, the lane's sendsPerEndpoint at once, starting none after a failure,
   * nor, in a probe, after the first acknowledged.
   */
  private async sendBatch(
    endpoint: WebhookRecord,
    batch: readonly ChangeRecord[],
    attempt: number,
    lane: DeliveryLane,
  ): Promise<{ results: EventResult[]; deliveries: WebhookDelivery[] }> {
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
      keys = await this.options.signer.keysFor(endpoint, this.now());
    } catch (error) {
      this.warn('secret', error, 'could not open a webhook signing secret');
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
      while (nextIndex < outgoing.length && !failedOnce && !(lane.probe && acknowledgedOnce) && !this.stopping) {
        const index = nextIndex;
        nextIndex += 1;
        const event = outgoing[index];
        if (!event) continue;
        const attemptedAt = this.now();
        const body = webhookEventJson(event.record);
        const timestamp = new Date(attemptedAt);
        const outcome = await this.options.sender.send(
          {
            url: endpoint.url,
            eventId: event.id,
            timestamp: Math.floor(attemptedAt / 1000),
            signature: keys.sign(event.id, timestamp, body),
            body,
          },
          this.aborter.signal,
        );
        // An attempt cut short by shutdown says nothing about the receiver: the change is simply sent again later.
        if (this.aborter.signal.aborted) return;
        this.options.metrics?.deliveries.inc({ outcome: outcome.failure ?? 'success' });
        this.options.metrics?.attemptDuration.observe(outcome.durationMs / 1000);
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

  /** After a failed attempt: 410 disables at once; otherwise a retry per the schedule, or disabling once it is spent. */
  private async failed(endpoint: WebhookRecord, failedAttempts: number, outcome: AttemptOutcome, now: number): Promise<void> {
    if (outcome.statusCode === 410) return this.disable(endpoint, GONE_DISABLED_REASON);
    const delay = retryDelay(this.options.retrySchedule, failedAttempts, this.random);
    if (delay === null) return this.disable(endpoint, retriesExhaustedReason(failedAttempts, outcome.error ?? 'no answer'));
    await this.options.store.webhooks.scheduleRetry(endpoint.id, this.holder, failedAttempts, iso(now + delay), iso(now));
  }

  private async disable(endpoint: WebhookRecord, reason: string): Promise<void> {
    const disabled = await this.options.store.webhooks.disable(endpoint.id, this.holder, reason, iso(this.now()));
    if (disabled) this.options.log.warn({ webhookId: endpoint.id, reason }, 'webhook endpoint disabled');
    this.forgetLag(endpoint.id);
  }

  /** Every attempt of a batch goes in the deliveries list; losing that record to a database error loses no event. */
  private async record(deliveries: readonly WebhookDelivery[]): Promise<void> {
    if (deliveries.length === 0) return;
    await this.options.store.webhooks
      .recordDeliveries(deliveries)
      .catch((error: unknown) => this.warn('record', error, 'could not record webhook delivery attempts'));
  }

  private reportCaughtUp(id: string, caughtUp: boolean): void {
    if (!caughtUp || !this.options.metrics) return;
    this.options.metrics.lagEvents.set({ webhook_id: id }, 0);
    this.options.metrics.lagSeconds.set({ webhook_id: id }, 0);
  }

  private forgetLag(id: string): void {
    this.reported.delete(id);
    this.options.metrics?.lagEvents.remove({ webhook_id: id });
    this.options.metrics?.lagSeconds.remove({ webhook_id: id });
  }

  private scheduleMetrics(delayMs: number): void {
    if (this.stopping) return;
    this.metricsTimer = setTimeout(() => {
      void this.refreshMetrics().finally(() => this.scheduleMetrics(METRICS_REFRESH_MS));
    }, delayMs);
    this.metricsTimer.unref();
  }

  /** The disabled count, and the lag of each endpoint this process delivered to lately, read one at a time. */
  private async refreshMetrics(): Promise<void> {
    const metrics = this.options.metrics!;
    const { store } = this.options;
    try {
      metrics.endpointsDisabled.set((await store.webhooks.countByStatus()).disabled);
      const now = this.now();
      for (const [id, leasedAt] of this.reported) {
        const endpoint = await store.webhooks.get(id);
        if (endpoint === null || endpoint.status === 'disabled' || now - leasedAt > LAG_FORGET_MS) {
          this.forgetLag(id);
          continue;
        }
        const events = await store.contacts.countChangesAfter(endpoint.ownerId, endpoint.cursor);
        metrics.lagEvents.set({ webhook_id: id }, events);
        metrics.lagSeconds.set({ webhook_id: id }, events === 0 ? 0 : Math.max(0, (now - Date.parse(endpoint.pendingSince)) / 1000));
      }
    } catch (error) {
      this.warn('metrics', error, 'could not refresh the webhook metrics');
    }
  }

  /** A warning per kind of failure, at most every WARNING_INTERVAL_MS, saying how many were left out. */
  private warn(kind: string, error: unknown, message: string): void {
    let warning = this.warnings.get(kind);
    if (warning === undefined) this.warnings.set(kind, (warning = new ThrottledWarning(WARNING_INTERVAL_MS)));
    const leftOut = warning.occurred();
    if (leftOut !== null) this.options.log.warn({ err: error, leftOut }, message);
  }
}

const iso = (ms: number) => new Date(ms).toISOString();
const sameCursor = (a: ChangePosition, b: ChangePosition) => a.seq === b.seq && a.after === b.after;
