import cluster from 'node:cluster';
import { createServer, type AddressInfo } from 'node:net';
import { availableParallelism } from 'node:os';
import closeWithGrace from 'close-with-grace';
import type { Command } from 'commander';
import { loadConfig, parsePort, parseWorkerCount, type Config } from '../../config.js';
import { runPrimary } from '../../cluster/primary.js';
import { clusterWorker, failWorkerStart, primaryShutdownRequest, stopWorker } from '../../cluster/worker.js';
import { flushLogs } from '../../log-destination.js';
import { createLogger } from '../../logger.js';
import { ListenError, startServer, type RunningServer } from '../../server.js';
import { onShutdownSignals, SHUTDOWN_SIGNALS, type ShutdownSignal } from '../../shutdown-signals.js';
import { watchForDetachedStore } from '../../store/detached-store-watch.js';
import type { CliIo } from '../io.js';

/**
 * A quarter of V8's default young generation: a request's garbage still dies young, and each worker keeps about
 * 24 MB less (8 MB took 16 MB off; 4 MB another 8-14 MB off the benchmark's peak; 2 MB cost a third of the rates).
 */
const WORKER_SEMI_SPACE_MB = 4;
/**
 * With an old-space cap under 256 MB, V8 grows the heap by only about 10% between full collections: every few MB
 * of promoted pages cost a full GC, whose concurrent marking took CPU from requests (1-connection p99 about 2x).
 * Doubling instead keeps full GCs rare while the cap still bounds the heap (measured: 1 full GC in 10 s instead of 8).
 */
const WORKER_HEAP_GROWING_PERCENT = 100;

export function registerServeCommand(program: Command, io: CliIo): void {
  program
    .command('serve')
    .description('start the HTTP API on an existing database (applies pending migrations first)')
    .option('--port <port>', 'port to listen on (env PORT, default 3000)')
    .option('--host <host>', 'address to listen on (env HOST, default 127.0.0.1)')
    .option('--workers <n>', 'server processes sharing the port (env WORKERS, default: one per core)')
    .action(async (options: { port?: string; host?: string; workers?: string }) => {
      const fromEnv = loadConfig(io.env);
      const host = options.host ?? fromEnv.host;
      const requestedPort = options.port === undefined ? fromEnv.port : parsePort(options.port, '--port');
      const workers =
        options.workers === undefined ? (fromEnv.workers ?? availableParallelism()) : parseWorkerCount(options.workers, '--workers');
      const clusterPrimary = workers > 1 && cluster.isPrimary;
      // A primary knows a listen failure at once rather than after every worker has started and failed; and port 0
      // becomes the free port it stands for now, so that the URL printed and the default OAuth issuer both name it.
      const port = requestedPort === 0 || clusterPrimary ? await probeListen(host, requestedPort) : requestedPort;
      const config = loadConfig(io.env, { host, port });
      if (clusterPrimary) {
        // The admin API's port too (its port 0 stays 0: the workers share the one free port it gives the first).
        const { admin } = config;
        if (admin.token !== null && admin.port !== 0) await probeListen(admin.host, admin.port);
        cluster.setupPrimary({
          args: ['serve', '--port', String(port), '--host', host, '--workers', '1'],
          execArgv: [
            ...process.execArgv,
            `--max-old-space-size=${config.workerHeapMb}`,
            `--max-semi-space-size=${WORKER_SEMI_SPACE_MB}`,
            `--heap-growing-percent=${WORKER_HEAP_GROWING_PERCENT}`,
          ],
        });
        const code = await runPrimary(config, workers, createLogger(config.logLevel), (line) => io.stderr(`${line}\n`));
        // Nothing is left to wait for, whatever a log reader or an idle handle would hold open.
        process.exit(code);
      }
      // A worker listens for its primary's shutdown request before starting, so an early request isn't lost.
      const shutdownRequested = cluster.isWorker ? primaryShutdownRequest() : null;
      let server: RunningServer;
      try {
        server = await startServer(config, { host, port }, cluster.isWorker ? { worker: clusterWorker } : {});
      } catch (error) {
        const listenFailure = describeListenFailure(error, host, port);
        if (cluster.isWorker) {
          if (listenFailure === null) createLogger(config.logLevel).error({ err: error }, 'worker could not start; exiting');
          return failWorkerStart(listenFailure);
        }
        throw listenFailure === null ? error : new Error(listenFailure);
      }
      io.stderr(`Contacts Read API listening on ${server.url} (${server.store.dialect.name})\n`);
      if (server.metricsUrl) io.stderr(`Prometheus metrics on ${server.metricsUrl}\n`);
      if (server.admin) io.stderr(`Admin API on ${server.admin.url}/admin/v1\n`);
      if (shutdownRequested) void shutdownRequested.then(() => stopWorker(server, config.shutdownTimeoutMs));
      else stopOnSignal(server, config);
      stopWhenDatabaseDetached(server, config, cluster.isWorker);
    });
}

/**
 * A server whose SQLite file was deleted, moved away or replaced would go on serving a file nobody else sees:
 * /readyz says so at once (503), and within a second the server stops gracefully, so that it opens the path again.
 * A worker exits 0 and its primary replaces it (with backoff while the file is missing); a single process exits 1,
 * for its supervisor to restart.
 */
function stopWhenDatabaseDetached(server: RunningServer, config: Config, worker: boolean): void {
  watchForDetachedStore(server.store, (reason) => {
    server.logger.error({ reason }, 'the database file is no longer at its path; stopping to open it again');
    stopWorker(server, config.shutdownTimeoutMs, worker ? 0 : 1);
  });
}

const LISTEN_FAILURES: Record<string, string> = {
  EADDRINUSE: 'the address is already in use',
  EACCES: 'permission denied (ports below 1024 need privileges)',
  EADDRNOTAVAIL: 'the address is not one of this machine’s',
};

/** Binds host:port for a moment and lets it go, returning the port bound; throws the one-line listen failure. */
function probeListen(host: string, port: number): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = createServer();
    probe.once('error', (error) => reject(new Error(describeListenFailure(error, host, port) ?? `cannot listen on ${host}:${port}`)));
    probe.listen({ host, port, exclusive: true }, () => {
      const bound = (probe.address() as AddressInfo).port;
      probe.close(() => resolve(bound));
    });
  });
}

/**
 * One line naming the address when `error` says the server cannot listen there (the admin API's own, for a ListenError
 * of its listener); restarting would not help.
 */
export function describeListenFailure(error: unknown, host: string, port: number): string | null {
  const address = error instanceof ListenError ? error : { host, port };
  const code = (error as { code?: unknown } | null)?.code;
  const reason = typeof code === 'string' ? LISTEN_FAILURES[code] : undefined;
  return reason === undefined ? null : `cannot listen on ${address.host}:${address.port}: ${reason}`;
}

/**
 * On SIGTERM/SIGINT (or a crash) the server stops accepting, in-flight requests finish, pools close, and the
 * process exits 0 — or 1 after SHUTDOWN_TIMEOUT_MS, a second signal (not the first one's echo, see ECHO_WINDOW_MS),
 * or a crash. close-with-grace handles crashes, the timeout and other signals; SIGTERM and SIGINT come through
 * onShutdownSignals, which tells an echo from a second request. Errors are logged through the service logger only,
 * which never writes their messages.
 */
function stopOnSignal(server: RunningServer, config: Config): void {
  const { logger } = server;
  let closing = false;
  let shutdownSignal: ShutdownSignal | undefined;
  const stopNow = (signal: NodeJS.Signals) => {
    logger.warn({ signal }, 'second signal during shutdown; exiting now');
    process.exit(1);
  };
  const graceful = closeWithGrace(
    {
      delay: config.shutdownTimeoutMs,
      logger: false,
      skip: [...SHUTDOWN_SIGNALS],
      onTimeout: (delayMs) => logger.error({ delayMs }, 'shutdown timed out; exiting before in-flight requests finished'),
      onSecondSignal: stopNow,
      onSecondError: (err) => logger.fatal({ err }, 'uncaught error during shutdown; exiting now'),
    },
    async ({ signal, err }) => {
      closing = true;
      if (err) logger.fatal({ err }, 'uncaught error; shutting down');
      else logger.info({ signal: signal ?? shutdownSignal }, 'shutting down');
      await server.close();
      await flushLogs();
    },
  );
  onShutdownSignals((signal) => {
    if (closing) return stopNow(signal);
    shutdownSignal = signal;
    graceful.close();
  }, stopNow);
}
