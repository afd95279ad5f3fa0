import cluster from 'node:cluster';
import { AggregatorRegistry } from 'prom-client';
import type { Config } from '../config.js';
import { RATE_LIMIT_WINDOW_MS, type WindowHit } from '../domain/rate-limit.js';
import { listenForMetrics } from '../http/metrics-endpoint.js';
import type { Logger } from 'pino';
import { createMemoryCounter } from '../rate-limit/memory-counter.js';
import { openStore } from '../store/open-store.js';
import { answerWorkers } from './ipc.js';

/** Set in the environment of the processes the primary forks. */
export const WORKER_ENV = 'CONTACTS_API_CLUSTER_WORKER';
/**
 * How the primary tells a worker to shut down gracefully. Workers ignore signals: a Ctrl-C reaches every process
 * of the group, and a second signal would cut a worker's graceful shutdown short.
 */
export const SHUTDOWN_MESSAGE = 'contacts-api:shutdown';

/**
 * Runs `workers` server processes sharing one port (node:cluster), so the service uses every core. The primary
 * applies migrations once, counts rate-limit hits for all workers when there is no Redis, serves the workers'
 * aggregated metrics, restarts a worker that dies, and on SIGTERM/SIGINT lets every worker shut down gracefully.
 */
export async function runPrimary(config: Config, workers: number, logger: Logger, announce: (line: string) => void): Promise<number> {
  const store = await openStore(config.database);
  try {
    const applied = await store.migrate();
    if (applied.length > 0) logger.info({ versions: applied }, 'applied database migrations');
  } finally {
    await store.close();
  }

  const counter = createMemoryCounter({ windowMs: RATE_LIMIT_WINDOW_MS });
  const aggregator = new AggregatorRegistry();
  const metrics = { contentType: aggregator.contentType, metrics: () => aggregator.clusterMetrics() };
  answerWorkers(async (request): Promise<WindowHit | string> =>
    request.kind === 'metrics' ? metrics.metrics() : counter.hit(request.key),
  );
  const metricsListener =
    config.metrics.port === null ? null : await listenForMetrics(metrics, { host: config.metrics.host, port: config.metrics.port });
  if (metricsListener) announce(`Prometheus metrics on ${metricsListener.url}`);

  let stopping = false;
  let exitCode = 0;
  const fork = () => cluster.fork({ [WORKER_ENV]: '1' });
  cluster.on('exit', (worker, code, signal) => {
    if (code !== 0) exitCode = 1;
    if (stopping) return;
    logger.error({ pid: worker.process.pid, code, signal }, 'worker exited; starting another');
    fork();
  });
  for (let index = 0; index < workers; index += 1) fork();

  await new Promise<void>((resolve) => {
    const stop = (signal: NodeJS.Signals) => {
      if (stopping) return;
      stopping = true;
      logger.info({ signal }, 'shutting down workers');
      const alive = Object.values(cluster.workers ?? {}).filter((worker) => worker !== undefined && !worker.isDead());
      if (alive.length === 0) return resolve();
      let left = alive.length;
      for (const worker of alive) {
        worker!.once('exit', () => (left -= 1) === 0 && resolve());
        worker!.send(SHUTDOWN_MESSAGE);
      }
    };
    process.once('SIGTERM', stop);
    process.once('SIGINT', stop);
  });
  await metricsListener?.close();
  await counter.close();
  return exitCode;
}
