import type { WebhookMetrics } from '../metrics/metrics.js';
import { countChangesWaiting } from '../operations/change-feed.js';
import type { Store } from '../store/store.js';
import type { DispatcherWarnings } from './dispatcher-warnings.js';

const METRICS_REFRESH_MS = 15_000;
/** An endpoint not leased for this long leaves this process's lag metrics (another process may deliver it now). */
const LAG_FORGET_MS = 3_600_000;

export interface LagMetricsOptions {
  store: Pick<Store, 'webhooks' | 'contacts'>;
  metrics: WebhookMetrics;
  warnings: DispatcherWarnings;
  now: () => number;
}

/**
 * The dispatcher's gauges: the disabled endpoints, and how far behind each endpoint this process delivered to lately is
 * (events and seconds), refreshed every METRICS_REFRESH_MS and set to zero at once when a batch catches up.
 */
export class LagMetrics {
  /** Endpoints this process delivered to lately, whose lag it reports: id → last leased at. */
  private readonly reported = new Map<string, number>();
  private timer: NodeJS.Timeout | undefined;
  private stopped = false;

  constructor(private readonly options: LagMetricsOptions) {}

  start(): void {
    this.schedule(0);
  }

  stop(): void {
    this.stopped = true;
    clearTimeout(this.timer);
  }

  leased(id: string, at: number): void {
    this.reported.set(id, at);
  }

  caughtUp(id: string): void {
    this.options.metrics.lagEvents.set({ webhook_id: id }, 0);
    this.options.metrics.lagSeconds.set({ webhook_id: id }, 0);
  }

  forget(id: string): void {
    this.reported.delete(id);
    this.options.metrics.lagEvents.remove({ webhook_id: id });
    this.options.metrics.lagSeconds.remove({ webhook_id: id });
  }

  private schedule(delayMs: number): void {
    if (this.stopped) return;
    this.timer = setTimeout(() => {
      void this.refresh().finally(() => this.schedule(METRICS_REFRESH_MS));
    }, delayMs);
    this.timer.unref();
  }

  /** The disabled count, and the lag of each endpoint this process delivered to lately, read one at a time. */
  private async refresh(): Promise<void> {
    const { store, metrics } = this.options;
    try {
      metrics.endpointsDisabled.set((await store.webhooks.countByStatus()).disabled);
      const now = this.options.now();
      for (const [id, leasedAt] of this.reported) {
        const endpoint = await store.webhooks.get(id);
        if (endpoint === null || endpoint.status === 'disabled' || now - leasedAt > LAG_FORGET_MS) {
          this.forget(id);
          continue;
        }
        const events = await countChangesWaiting(store.contacts, endpoint);
        metrics.lagEvents.set({ webhook_id: id }, events);
        metrics.lagSeconds.set({ webhook_id: id }, events === 0 ? 0 : Math.max(0, (now - Date.parse(endpoint.pendingSince)) / 1000));
      }
    } catch (error) {
      this.options.warnings.warn('metrics', error, 'could not refresh the webhook metrics');
    }
  }
}
