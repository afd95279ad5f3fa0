import cluster, { type Worker } from 'node:cluster';
import { AggregatorRegistry } from 'prom-client';
import type { Logger } from 'pino';
import type { Config } from '../config.js';
import { RATE_LIMIT_WINDOW_MS, type WindowHit } from '../domain/rate-limit.js';
import { listenForMetrics } from '../metrics/endpoint.js';
import { flushLogs } from '../log-destination.js';
import { migrateDatabase } from '../operations/migrations.js';
import { createMemoryCounter } from '../rate-limit/memory-counter.js';
import { onShutdownSignals, type ShutdownSignal } from '../shutdown-signals.js';
import { answerWorkers } from './ipc.js';
import { leaseFor, type LeasedHit } from './primary-counter.js';
import { restartDelayMs, STABLE_WORKER_MS } from './restart-backoff.js';
import { isFatalStartMessage, SHUTDOWN_MESSAGE, WEBHOOK_ROLE_ENV } from './worker.js';

/** Set in the environment of the processes the primary forks. */
export const WORKER_ENV = 'CONTACTS_API_CLUSTER_WORKER';
/**
 * How long past SHUTDOWN_TIMEOUT_MS the primary waits for a worker's own exit before it kills the worker: the
 * whole service is gone within SHUTDOWN_TIMEOUT_MS + 2 s, whatever a worker is stuck on.
 */
const WORKER_KILL_GRACE_MS = 1_000;

/**
 * Runs `workers` server processes sharing one port (node:cluster), so the service uses every core. The primary
 * applies migrations once, counts rate-limit hits for all workers when there is no Redis, serves the workers'
 * aggregated metrics, and replaces a worker that exits (with backoff while they keep failing). A worker that cannot
 * listen at all (the port is taken) stops the service with that one line. On SIGTERM/SIGINT every worker shuts down
 * gracefully, and one that overruns SHUTDOWN_TIMEOUT_MS is killed; a second signal (not the first one's echo, see
 * ECHO_WINDOW_MS) kills them all at once.
 */
export async function runPrimary(config: Config, workers: number, logger: Logger, announce: (line: string) => void): Promise<number> {
  const applied = await migrateDatabase(config.database, config.dbPooler);
  if (applied.length > 0) logger.info({ versions: applied }, 'applied database migrations');
  // Only now: a missing or unusable database stops `serve` with its one line before the service looks started.
  announce(`Contacts Read API: ${workers} workers`);

  const counter = createMemoryCounter({ windowMs: RATE_LIMIT_WINDOW_MS });
  const aggregator = new AggregatorRegistry();
  const metrics = { contentType: aggregator.contentType, metrics: () => aggregator.clusterMetrics() };
  answerWorkers(async (request): Promise<LeasedHit | WindowHit | string> => {
    if (request.kind === 'metrics') return metrics.metrics();
    if (request.kind === 'rate-limit-peek') return counter.peek(request.key);
    // Counted and reserved in one step: another worker's request counted between the two would get a count of the block.
    const hit = counter.hitNow(request.key);
    // Requests counted in advance, which the worker counts out itself (primary-counter.ts).
    const leased = leaseFor(hit.count, request.limit);
    if (leased > 0) counter.reserve(request.key, leased);
    return { ...hit, leased };
  });
  const metricsListener =
    config.metrics.port === null ? null : await listenForMetrics(metrics, { host: config.metrics.host, port: config.metrics.port });
  if (metricsListener) announce(`Prometheus metrics on ${metricsListener.url}`);

  const exitCode = await superviseWorkers(config, workers, logger, announce);
  await metricsListener?.close();
  await counter.close();
  await flushLogs();
  return exitCode;
}

/**
 * How glibc's malloc behaves in a worker; an operator's own value of each variable wins.
 * - MALLOC_ARENA_MAX: glibc gives each thread that allocates its own arena, up to 8 per core, and keeps what they
 *   freed. zlib compresses on the four threads of libuv's pool, so a worker's resident memory grew by its
 *   compressions' peaks: two arenas took 15-20 MB off a worker's peak (245 to 225-230 MB), at the same rates.
 * - MALLOC_MMAP_THRESHOLD_ and MALLOC_TRIM_THRESHOLD_: left alone, glibc raises its mmap threshold each time a large
 *   block is freed, so the page buffers and compression windows of a busy worker end up inside the heap, which it
 *   then seldom gives back. Fixed at 128 KiB, they took another 20-25 MB off the peak (184-189 to 159-164 MB).
 */
const WORKER_MALLOC_ENV: Record<string, string> = {
  MALLOC_ARENA_MAX: '2',
  MALLOC_MMAP_THRESHOLD_: '131072',
  MALLOC_TRIM_THRESHOLD_: '131072',
};

/** The malloc settings of WORKER_MALLOC_ENV that the environment does not set already. */
function workerMallocEnv(env: NodeJS.ProcessEnv): Record<string, string> {
  return Object.fromEntries(Object.entries(WORKER_MALLOC_ENV).map(([name, value]) => [name, env[name] ?? value]));
}

/** Forks the workers and keeps them running until a signal (or a fatal start failure); resolves to the exit code. */
function superviseWorkers(config: Config, workers: number, logger: Logger, announce: (line: string) => void): Promise<number> {
  const startedAt = new Map<Worker, number>();
  /** Each worker's slot, 0 to workers - 1: a replacement takes its predecessor's, and slot 0 delivers webhooks. */
  const slots = new Map<Worker, number>();
  const pendingRestarts = new Set<NodeJS.Timeout>();
  let earlyExitsInARow = 0;
  let stopping = false;
  let exitCode = 0;

  const alive = () => Object.values(cluster.workers ?? {}).filter((worker): worker is Worker => worker !== undefined && !worker.isDead());
  const fork = (slot: number) => {
    // Whether a worker with the role runs the dispatcher is for the worker to say (its database's dialect decides).
    const worker = cluster.fork({ [WORKER_ENV]: '1', [WEBHOOK_ROLE_ENV]: slot === 0 ? '1' : '0', ...workerMallocEnv(process.env) });
    startedAt.set(worker, Date.now());
    slots.set(worker, slot);
    worker.on('message', (message: unknown) => {
      if (!isFatalStartMessage(message) || stopping) return;
      announce(`error: ${message.fatal}`);
      exitCode = 1;
      stop('fatal');
    });
  };

  let finish: (code: number) => void = () => undefined;
  const finished = new Promise<number>((resolve) => (finish = resolve));
  const finishWhenAllExited = () => {
    if (stopping && alive().length === 0) finish(exitCode);
  };

  cluster.on('exit', (worker, code, signal) => {
    const livedMs = Date.now() - (startedAt.get(worker) ?? 0);
    const slot = slots.get(worker) ?? 0;
    startedAt.delete(worker);
    slots.delete(worker);
    if (stopping) {
      if (code !== 0) exitCode = 1;
      return finishWhenAllExited();
    }
    earlyExitsInARow = livedMs < STABLE_WORKER_MS ? earlyExitsInARow + 1 : 0;
    const delayMs = restartDelayMs(earlyExitsInARow);
    logger.error({ workerPid: worker.process.pid, code, signal, livedMs, restartInMs: delayMs }, 'worker exited; starting another');
    const timer = setTimeout(() => {
      pendingRestarts.delete(timer);
      fork(slot);
    }, delayMs);
    pendingRestarts.add(timer);
  });

  const killAll = () => {
    for (const worker of alive()) worker.process.kill('SIGKILL');
  };
  function stop(reason: NodeJS.Signals | 'fatal'): void {
    if (stopping) return;
    stopping = true;
    for (const timer of pendingRestarts) clearTimeout(timer);
    pendingRestarts.clear();
    if (reason === 'fatal') {
      killAll();
    } else {
      logger.info({ signal: reason }, 'shutting down workers');
      for (const worker of alive()) worker.send(SHUTDOWN_MESSAGE);
      setTimeout(() => {
        const overrun = alive();
        if (overrun.length === 0) return;
        logger.error({ workerPids: overrun.map((worker) => worker.process.pid) }, 'workers overran the shutdown timeout; killing them');
        exitCode = 1;
        killAll();
      }, config.shutdownTimeoutMs + WORKER_KILL_GRACE_MS).unref();
    }
    finishWhenAllExited();
  }
  const stopNow = (signal: ShutdownSignal) => {
    logger.warn({ signal }, 'second signal during shutdown; killing the workers now');
    exitCode = 1;
    killAll();
  };
  onShutdownSignals((signal) => (stopping ? stopNow(signal) : stop(signal)), stopNow);

  for (let slot = 0; slot < workers; slot += 1) fork(slot);
  return finished;
}
