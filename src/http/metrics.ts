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
  readonly rateLimitFailOpen: Counter;
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
    rateLimitFailOpen: new Counter({
      name: 'contacts_api_rate_limit_fail_open_total',
      help: 'Requests let through without a rate limit because the counter (Redis) failed.',
      registers,
    }),
  };
}
