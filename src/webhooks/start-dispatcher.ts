import type { Config } from '../config.js';
import type { WebhookMetrics } from '../metrics/metrics.js';
import type { Store } from '../store/store.js';
import { WebhookDispatcher } from './dispatcher.js';
import type { DispatcherLog } from './dispatcher-warnings.js';
import { createWebhookSender } from './sender.js';
import { WebhookSigner } from './signer.js';

/**
 * Whether this process delivers webhooks: every process on a database that takes several writers at once (the leases
 * share the endpoints out); on one that takes one writer at a time, only the process given the role (`serve` gives it to
 * one worker of a cluster, and to that worker's replacement), or a server that runs alone.
 */
export function deliversWebhooks(store: Pick<Store, 'dialect'>, worker: { deliversWebhooks: boolean } | undefined): boolean {
  return !store.dialect.oneWriterAtATime || (worker?.deliversWebhooks ?? true);
}

/** Starts this process's webhook dispatcher, as the configuration says. */
export function startWebhookDispatcher(
  store: Pick<Store, 'webhooks' | 'contacts' | 'oauth'>,
  config: Pick<Config, 'webhooks' | 'changesRetentionDays'>,
  log: DispatcherLog,
  metrics?: WebhookMetrics,
): WebhookDispatcher {
  return new WebhookDispatcher({
    store,
    sender: createWebhookSender({ allowPrivate: config.webhooks.allowPrivateUrls, timeoutMs: config.webhooks.timeoutMs }),
    signer: new WebhookSigner(store.oauth),
    retrySchedule: config.webhooks.retrySchedule,
    retentionDays: config.changesRetentionDays,
    log,
    metrics,
  }).start();
}
