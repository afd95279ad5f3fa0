import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';
import type { PoolStats } from '../store/store.js';

const HTTP_LABELS = ['method', 'route', 'status_code'] as const;

/** The service's Prometheus metrics, in a registry of their own (so each app or test has its own). */
export interface Metrics {
  readonly registry: Registry;
  readonly httpRequests: Counter<(typeof HTTP_LABELS)[number]>;
  readonly httpDuration: Histogram<(typeof HTTP_LABELS)[number]>;
  readonly authFailures: Counter<'reason'>;
  readonly rateLimited: Counter;
  readonly authFailureLimited: Counter;
  readonly rateLimitFailOpen: Counter;
  readonly mcpMessages: Counter<'method' | 'tool'>;
  readonly webhooks: WebhookMetrics;
}

/** How webhook attempts went (by outcome), how long they took, how far each endpoint lags, how many are disabled. */
export interface WebhookMetrics {
  readonly deliveries: Counter<'outcome'>;
  readonly attemptDuration: Histogram;
  readonly lagEvents: Gauge<'webhook_id'>;
  readonly lagSeconds: Gauge<'webhook_id'>;
  readonly endpointsDisabled: Gauge;
}

export interface MetricsOptions {
  /** The database pool's use, read at each scrape; omitted for a store without a pool (SQLite). */
  poolStats?: () => PoolStats;
  /** Also export Node.js process metrics (CPU, memory, event loop lag, handles): on for the server. */
  processMetrics?: boolean;
  /** How many log lines this process dropped because stdout was not read (see src/log-destination.ts). */
  logLinesDropped?: () => number;
}

export function createMetrics(options: MetricsOptions = {}): Metrics {
  const registry = new Registry();
  const registers = [registry];
  if (options.processMetrics) collectDefaultMetrics({ register: registry });
  const { poolStats } = options;
  if (poolStats) {
    new Gauge({
      name: 'contacts_api_db_pool_connections',
      help: 'Database pool connections, by state: total (open), idle.',
      labelNames: ['state'],
      registers,
      collect() {
        const stats = poolStats();
        this.set({ state: 'total' }, stats.total);
        this.set({ state: 'idle' }, stats.idle);
      },
    });
    new Gauge({
      name: 'contacts_api_db_pool_waiting_requests',
      help: 'Queries waiting for a free database pool connection.',
      registers,
      collect() {
        this.set(poolStats().waiting);
      },
    });
  }
  const { logLinesDropped } = options;
  if (logLinesDropped) {
    new Counter({
      name: 'contacts_api_log_lines_dropped_total',
      help: 'Log lines dropped because stdout was not read fast enough (or its reader went away).',
      registers,
      collect() {
        this.reset();
        this.inc(logLinesDropped());
      },
    });
  }
  return {
    registry,
    httpRequests: new Counter({
      name: 'contacts_api_http_requests_total',
      help: 'HTTP requests answered, by method, route pattern and status code.',
      labelNames: HTTP_LABELS,
      registers,
    }),
    httpDuration: new Histogram({
      name: 'contacts_api_http_request_duration_seconds',
      help: 'Time to answer an HTTP request, by method, route pattern and status code.',
      labelNames: HTTP_LABELS,
      buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
      registers,
    }),
    authFailures: new Counter({
      name: 'contacts_api_auth_failures_total',
      help: 'Requests refused by authentication, by reason (missing, malformed, unknown, revoked, expired, scope, plan).',
      labelNames: ['reason'],
      registers,
    }),
    rateLimited: new Counter({
      name: 'contacts_api_rate_limited_requests_total',
      help: 'Requests refused with 429 because their key exceeded its rate limit.',
      registers,
    }),
    authFailureLimited: new Counter({
      name: 'contacts_api_auth_failure_limited_requests_total',
      help: 'Requests refused with 429 because their client address failed authentication AUTH_FAILURES_PER_MINUTE times this minute.',
      registers,
    }),
    rateLimitFailOpen: new Counter({
      name: 'contacts_api_rate_limit_fail_open_total',
      help: 'Requests let through without a rate limit because the counter (Redis) failed.',
      registers,
    }),
    mcpMessages: new Counter({
      name: 'contacts_api_mcp_requests_total',
      help: 'JSON-RPC requests answered on /mcp, by MCP method and, for tools/call, tool (2026-07-28: from the Mcp-Method and Mcp-Name headers).',
      labelNames: ['method', 'tool'],
      registers,
    }),
    webhooks: createWebhookMetrics(registers),
  };
}

/**
 * The webhook dispatcher's metrics. Its gauges are the same in every process that refreshes them (the database's view),
 * so a cluster's primary takes their largest value rather than their sum (processes that run no dispatcher report 0).
 */
function createWebhookMetrics(registers: Registry[]): WebhookMetrics {
  return {
    deliveries: new Counter({
      name: 'contacts_api_webhook_deliveries_total',
      help: 'Webhook delivery attempts, by outcome: success (2xx), http_error (another status), timeout, connection_error (refused, reset, DNS, a private address).',
      labelNames: ['outcome'],
      registers,
    }),
    attemptDuration: new Histogram({
      name: 'contacts_api_webhook_attempt_duration_seconds',
      help: 'Time of one webhook delivery attempt, connection to the end of the response.',
      buckets: [0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 15, 30],
      registers,
    }),
    lagEvents: new Gauge({
      name: 'contacts_api_webhook_lag_events',
      help: 'Events waiting for a webhook endpoint (its owner’s changes after its cursor), by endpoint; refreshed every 15 s.',
      labelNames: ['webhook_id'],
      aggregator: 'max',
      registers,
    }),
    lagSeconds: new Gauge({
      name: 'contacts_api_webhook_lag_seconds',
      help: 'How long the oldest event waiting for a webhook endpoint has waited, by endpoint; refreshed every 15 s.',
      labelNames: ['webhook_id'],
      aggregator: 'max',
      registers,
    }),
    endpointsDisabled: new Gauge({
      name: 'contacts_api_webhook_endpoints_disabled',
      help: 'Webhook endpoints disabled (by an admin, a 410, retries exhausted, or the change log’s retention).',
      aggregator: 'max',
      registers,
    }),
  };
}
