import { randomBytes } from 'node:crypto';
import { setMaxListeners } from 'node:events';
import { hostname } from 'node:os';
import type { WebhookMetrics } from '../metrics/metrics.js';
import type { Store, WebhookRecord } from '../store/store.js';
import { BatchDelivery, type Lease } from './batch-delivery.js';
import { BatchSender } from './batch-sender.js';
import { DELIVERY_LANES, type DeliveryLane } from './delivery-lanes.js';
import { DispatcherWarnings, type DispatcherLog } from './dispatcher-warnings.js';
import { iso } from './iso-time.js';
import { LagMetrics } from './lag-metrics.js';
import type { WebhookSender } from './sender.js';
import type { WebhookSigner } from './signer.js';

/** How often the dispatcher looks for endpoints with work: the usual delay between a write and its first attempt. */
export const WEBHOOK_POLL_MS = 250;
/**
 * A lease's length, renewed every LEASE_RENEW_MS while the endpoint is worked on: how long the endpoints of a process
 * that died (SIGKILL, power loss) wait before another process takes them over.
 */
const LEASE_MS = 15_000;
const LEASE_RENEW_MS = 5_000;
/** How long one endpoint is worked on before its lease is given back, so that every endpoint with work gets its turn. */
const TURN_MS = 10_000;
/** The longest wait between polls while the database fails. */
const MAX_BACKOFF_MS = 5_000;

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

/**
 * Pushes each owner's changes to their webhook endpoints (docs/webhooks.md). Every WEBHOOK_POLL_MS it leases the
 * endpoints that have work (a lease keeps other processes off them), as many as each DeliveryLane has room for, and
 * delivers to each in batches read after the endpoint's cursor (BatchDelivery): the cursor moves only over changes a
 * receiver acknowledged, so a process that dies loses nothing, and another takes its endpoints once their leases run
 * out. A failing database is logged sparingly and waited out; nothing here throws.
 */
export class WebhookDispatcher {
  private readonly holder: string;
  private readonly now: () => number;
  /** The endpoints being delivered to, by lane: id → the work. */
  private readonly working = new Map(DELIVERY_LANES.map((lane) => [lane, new Map<string, Promise<void>>()]));
  private readonly aborter = new AbortController();
  private readonly warnings: DispatcherWarnings;
  private readonly lag: LagMetrics | undefined;
  private readonly batches: BatchDelivery;
  private pollTimer: NodeJS.Timeout | undefined;
  private failuresInARow = 0;
  private stopping = false;
  private polling: Promise<void> = Promise.resolve();

  constructor(private readonly options: DispatcherOptions) {
    this.holder = options.holder ?? `${hostname()}:${process.pid}:${randomBytes(4).toString('hex')}`;
    this.now = options.now ?? Date.now;
    // Every attempt in flight listens for the one shutdown signal: hundreds at once is no leak.
    setMaxListeners(0, this.aborter.signal);
    this.warnings = new DispatcherWarnings(options.log);
    const { store, metrics } = options;
    this.lag = metrics ? new LagMetrics({ store, metrics, warnings: this.warnings, now: this.now }) : undefined;
    const sender = new BatchSender({
      sender: options.sender,
      signer: options.signer,
      metrics,
      warnings: this.warnings,
      now: this.now,
      shutdown: this.aborter.signal,
      stopping: () => this.stopping,
    });
    this.batches = new BatchDelivery({
      store,
      sender,
      retrySchedule: options.retrySchedule,
      retentionDays: options.retentionDays,
      holder: this.holder,
      log: options.log,
      warnings: this.warnings,
      lag: this.lag,
      now: this.now,
      random: options.random ?? Math.random,
    });
  }

  start(): this {
    this.schedulePoll(0);
    this.lag?.start();
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
    this.lag?.stop();
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
        return this.warnings.warn('lease', error, 'could not look for webhook endpoints with work; trying again');
      }
      for (const endpoint of leased) {
        if (works.has(endpoint.id)) continue;
        this.lag?.leased(endpoint.id, now);
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
    const lease: Lease = { lost: false };
    const renewing = this.renewWhileWorking(leased.id, lease);
    const turnEnds = this.now() + TURN_MS;
    let endpoint: WebhookRecord | null = leased;
    try {
      do {
        endpoint = await this.batches.deliver(endpoint, lease, lane);
      } while (endpoint !== null && !lane.probe && !this.stopping && !lease.lost && this.now() < turnEnds);
    } catch (error) {
      this.warnings.warn('deliver', error, 'webhook delivery failed on a database error; the endpoint is tried again');
    } finally {
      renewing.stop();
      await this.options.store.webhooks
        .releaseLease(leased.id, this.holder)
        .catch((error: unknown) => this.warnings.warn('release', error, 'could not release a webhook lease; it runs out in 15 s'));
    }
  }

  private renewWhileWorking(id: string, lease: Lease): { stop(): void } {
    const timer = setInterval(() => {
      const now = this.now();
      this.options.store.webhooks.renewLease(id, this.holder, iso(now + LEASE_MS)).then(
        (held) => {
          if (!held) lease.lost = true;
        },
        (error: unknown) => this.warnings.warn('renew', error, 'could not renew a webhook lease; trying again'),
      );
    }, LEASE_RENEW_MS).unref();
    return { stop: () => clearInterval(timer) };
  }
}
