import cluster from 'node:cluster';
import { availableParallelism } from 'node:os';
import closeWithGrace from 'close-with-grace';
import type { Command } from 'commander';
import { loadConfig, parsePort, parseWorkerCount, type Config } from '../../config.js';
import { runPrimary, SHUTDOWN_MESSAGE } from '../../cluster/primary.js';
import { createLogger } from '../../logger.js';
import { startServer, type RunningServer } from '../../server.js';
import type { CliIo } from '../io.js';

/**
 * Half of V8's default young generation: a request's garbage still dies young (measured: the same hot-page
 * throughput), and each worker keeps about 16 MB less.
 */
const WORKER_SEMI_SPACE_MB = 8;
/**
 * With an old-space cap under 256 MB, V8 grows the heap by only about 10% between full collections: every few MB
 * of promoted pages cost a full GC, whose concurrent marking took CPU from requests (1-connection p99 about 2x).
 * Doubling instead keeps full GCs rare while the cap still bounds the heap (measured: 1 full GC in 10 s instead of 8).
 */
const WORKER_HEAP_GROWING_PERCENT = 100;

export function registerServeCommand(program: Command, io: CliIo): void {
  program
    .command('serve')
    .description('start the HTTP API (applies migrations first)')
    .option('--port <port>', 'port to listen on (env PORT, default 3000)')
    .option('--host <host>', 'address to listen on (env HOST, default 127.0.0.1)')
    .option('--workers <n>', 'server processes sharing the port (env WORKERS, default: one per core)')
    .action(async (options: { port?: string; host?: string; workers?: string }) => {
      const config = loadConfig(io.env);
      const port = options.port === undefined ? config.port : parsePort(options.port, '--port');
      const workers =
        options.workers === undefined ? (config.workers ?? availableParallelism()) : parseWorkerCount(options.workers, '--workers');
      if (workers > 1 && cluster.isPrimary) {
        cluster.setupPrimary({
          args: ['serve', '--port', String(port), '--host', options.host ?? config.host, '--workers', '1'],
          execArgv: [
            ...process.execArgv,
            `--max-old-space-size=${config.workerHeapMb}`,
            `--max-semi-space-size=${WORKER_SEMI_SPACE_MB}`,
            `--heap-growing-percent=${WORKER_HEAP_GROWING_PERCENT}`,
          ],
        });
        io.stderr(`Contacts Read API: ${workers} workers\n`);
        process.exitCode = await runPrimary(config, workers, createLogger(config.logLevel), (line) => io.stderr(`${line}\n`));
        return;
      }
      // A worker listens for its primary's shutdown request before starting, so an early request isn't lost.
      const shutdownRequested = cluster.isWorker ? primaryShutdownRequest() : null;
      const server = await startServer(config, { host: options.host ?? config.host, port }, { worker: cluster.isWorker });
      io.stderr(`Contacts Read API listening on ${server.url} (${server.store.kind})\n`);
      if (server.metricsUrl) io.stderr(`Prometheus metrics on ${server.metricsUrl}\n`);
      if (shutdownRequested) void shutdownRequested.then(() => stopWorker(server, config));
      else stopOnSignal(server, config);
    });
}

/**
 * On SIGTERM/SIGINT (or a crash) the server stops accepting, in-flight requests finish, pools close, and the
 * process exits 0 — or 1 after SHUTDOWN_TIMEOUT_MS, a second signal, or a crash. Errors are logged through the
 * service logger only, which never writes their messages.
 */
function stopOnSignal(server: RunningServer, config: Config): void {
  const { logger } = server;
  closeWithGrace(
    {
      delay: config.shutdownTimeoutMs,
      logger: false,
      onTimeout: (delayMs) => logger.error({ delayMs }, 'shutdown timed out; exiting before in-flight requests finished'),
      onSecondSignal: (signal) => logger.warn({ signal }, 'second signal during shutdown; exiting now'),
      onSecondError: (err) => logger.fatal({ err }, 'uncaught error during shutdown; exiting now'),
    },
    async ({ signal, err }) => {
      if (err) logger.fatal({ err }, 'uncaught error; shutting down');
      else logger.info({ signal }, 'shutting down');
      await server.close();
    },
  );
}

/** Resolves when the primary asks this worker to shut down. Workers ignore signals (see SHUTDOWN_MESSAGE). */
function primaryShutdownRequest(): Promise<void> {
  const ignore = () => undefined;
  process.on('SIGINT', ignore).on('SIGTERM', ignore);
  return new Promise((resolve) => {
    process.on('message', (message) => message === SHUTDOWN_MESSAGE && resolve());
    // A primary that died without asking (SIGKILL, crash) must not leave its workers serving.
    process.once('disconnect', () => resolve());
  });
}

/** Stops like a single server would, within the same bound, then leaves the cluster. */
function stopWorker(server: RunningServer, config: Config): void {
  setTimeout(() => process.exit(1), config.shutdownTimeoutMs).unref();
  server.close().then(
    () => process.connected && process.disconnect(),
    (err: unknown) => {
      server.logger.error({ err }, 'worker shutdown failed');
      process.exit(1);
    },
  );
}
