import type { Store } from './store.js';
import { DAY_MS } from '../domain/duration.js';

/** Rows one prune statement removes; a run stops after PRUNE_BATCHES of them and goes on at the next run. */
const PRUNE_BATCH_ROWS = 1000;
const PRUNE_BATCHES = 20;
const PRUNE_INTERVAL_MS = 3_600_000;
const FIRST_PRUNE_AFTER_MS = 60_000;
/**
 * A change is kept a day past the retention: a change written in a transaction that began before a token was issued
 * can carry an earlier time than the token, and must outlive it.
 */
const PRUNE_MARGIN_MS = DAY_MS;

export interface PruneLog {
  warn(details: object, message: string): void;
}

/** Removes change-log rows no followable token can need, in bounded work per run; returns how many went. */
export async function pruneChangesOnce(store: Pick<Store, 'pruneChanges'>, retentionDays: number, now = Date.now()): Promise<number> {
  const before = new Date(now - retentionDays * DAY_MS - PRUNE_MARGIN_MS).toISOString();
  return inBatches((maxRows) => store.pruneChanges(before, maxRows));
}

/** Runs a prune statement until it removes less than a batch, PRUNE_BATCHES times at most; returns the rows removed. */
async function inBatches(prune: (maxRows: number) => Promise<number>): Promise<number> {
  let removed = 0;
  for (let batch = 0; batch < PRUNE_BATCHES; batch += 1) {
    const count = await prune(PRUNE_BATCH_ROWS);
    removed += count;
    if (count < PRUNE_BATCH_ROWS) break;
  }
  return removed;
}

/** Removes expired OAuth codes, tokens, grants and interactions, in bounded work per run; returns how many went. */
export async function pruneOAuthRecordsOnce(store: Pick<Store, 'oauth'>, now = Date.now()): Promise<number> {
  const before = new Date(now).toISOString();
  return inBatches((maxRows) => store.oauth.pruneExpired(before, maxRows));
}

/** Removes Idempotency-Keys whose window has passed, in bounded work per run; returns how many went. */
export async function pruneIdempotencyKeysOnce(store: Pick<Store, 'idempotency'>, now = Date.now()): Promise<number> {
  const at = new Date(now).toISOString();
  return inBatches((maxRows) => store.idempotency.pruneExpired(at, maxRows));
}

/** How long a webhook endpoint's delivery attempts stay in its deliveries list. */
export const WEBHOOK_DELIVERIES_KEPT_DAYS = 7;

/** Removes webhook delivery attempts older than WEBHOOK_DELIVERIES_KEPT_DAYS, in bounded work per run; returns how many went. */
export async function pruneWebhookDeliveriesOnce(store: Pick<Store, 'webhooks'>, now = Date.now()): Promise<number> {
  const before = new Date(now - WEBHOOK_DELIVERIES_KEPT_DAYS * DAY_MS).toISOString();
  return inBatches((maxRows) => store.webhooks.pruneDeliveries(before, maxRows));
}

/**
 * Prunes the change feed, expired OAuth records, Idempotency-Keys and old webhook delivery attempts a minute after
 * start, then hourly, never keeping the process alive; returns a stop function.
 */
export function pruneChangesPeriodically(
  store: Pick<Store, 'pruneChanges' | 'oauth' | 'idempotency' | 'webhooks'>,
  retentionDays: number,
  log: PruneLog,
): () => void {
  let timer: NodeJS.Timeout;
  const schedule = (delayMs: number) => {
    timer = setTimeout(() => {
      pruneChangesOnce(store, retentionDays)
        .catch((error: unknown) => log.warn({ err: error }, 'pruning the change feed failed; it is tried again in an hour'))
        .then(() => pruneOAuthRecordsOnce(store))
        .catch((error: unknown) => log.warn({ err: error }, 'pruning expired OAuth records failed; it is tried again in an hour'))
        .then(() => pruneIdempotencyKeysOnce(store))
        .catch((error: unknown) => log.warn({ err: error }, 'pruning expired Idempotency-Keys failed; it is tried again in an hour'))
        .then(() => pruneWebhookDeliveriesOnce(store))
        .catch((error: unknown) => log.warn({ err: error }, 'pruning old webhook deliveries failed; it is tried again in an hour'))
        .finally(() => schedule(PRUNE_INTERVAL_MS));
    }, delayMs);
    timer.unref();
  };
  schedule(FIRST_PRUNE_AFTER_MS);
  return () => clearTimeout(timer);
}
