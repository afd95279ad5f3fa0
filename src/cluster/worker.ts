import { AggregatorRegistry } from 'prom-client';
import { flushLogs } from '../log-destination.js';
import type { ClusterWorker, RunningServer } from '../server.js';
import { SHUTDOWN_SIGNALS } from '../shutdown-signals.js';
import { askPrimary } from './ipc.js';
import { createPrimaryCounter } from './primary-counter.js';

/**
 * How the primary tells a worker to shut down gracefully. Workers ignore signals: a Ctrl-C reaches every process
 * of the group, and a second signal would cut a worker's graceful shutdown short.
 */
export const SHUTDOWN_MESSAGE = 'contacts-api:shutdown';

/** What a worker that cannot start tells its primary before exiting, when restarting it cannot help. */
export interface FatalStartMessage {
  channel: 'contacts-api';
  fatal: string;
}

export function isFatalStartMessage(message: unknown): message is FatalStartMessage {
  const candidate = message as Partial<FatalStartMessage> | null;
  return candidate?.channel === 'contacts-api' && typeof candidate.fatal === 'string';
}

/**
 * Set to `1` in the environment of the one worker the primary gives the webhook dispatcher's role (and of its
 * replacement), which a database taking one writer at a time runs in one process only.
 */
export const WEBHOOK_ROLE_ENV = 'CONTACTS_API_WEBHOOK_DISPATCHER';

/**
 * What this worker leaves to its primary, for startServer: the rate-limit counts and the metrics of every worker; and
 * whether it has the webhook dispatcher's role.
 */
export const clusterWorker: ClusterWorker = {
  deliversWebhooks: process.env[WEBHOOK_ROLE_ENV] === '1',
  createCounter: createPrimaryCounter,
  shareMetrics: (registry) => {
    // Constructing one is what makes prom-client answer the primary's metrics requests in this worker.
    new AggregatorRegistry();
    AggregatorRegistry.setRegistries([registry]);
    return { contentType: registry.contentType, metrics: () => askPrimary<string>({ kind: 'metrics' }) };
  },
};

/** Resolves when the primary asks this worker to shut down, or goes away. Workers ignore signals (see SHUTDOWN_MESSAGE). */
export function primaryShutdownRequest(): Promise<void> {
  for (const signal of SHUTDOWN_SIGNALS) process.on(signal, () => undefined);
  return new Promise((resolve) => {
    process.on('message', (message) => message === SHUTDOWN_MESSAGE && resolve());
    // A primary that died without asking (SIGKILL, crash) must not leave its workers serving.
    process.once('disconnect', () => resolve());
  });
}

/** Exits now with `code`, once the last log lines had a short chance to leave. */
export async function exitWorker(code: number): Promise<never> {
  await flushLogs();
  process.exit(code);
}

/**
 * Stops like a single server would, within the same bound, then exits with `exitCode` (1 if stopping fails or
 * overruns). The primary enforces the bound too: it kills a worker that overruns it.
 */
export function stopWorker(server: RunningServer, shutdownTimeoutMs: number, exitCode = 0): void {
  setTimeout(() => process.exit(1), shutdownTimeoutMs).unref();
  server.close().then(
    () => exitWorker(exitCode),
    (err: unknown) => {
      server.logger.error({ err }, 'worker shutdown failed');
      return exitWorker(1);
    },
  );
}

/**
 * A worker that cannot start exits: with `fatal` (a one-line reason, e.g. the port is taken) the primary stops
 * the whole service instead of restarting it.
 */
export function failWorkerStart(fatal: string | null): Promise<never> {
  if (fatal === null || !process.connected) return exitWorker(1);
  return new Promise<never>(() => {
    process.send!({ channel: 'contacts-api', fatal } satisfies FatalStartMessage, () => void exitWorker(1));
  });
}
