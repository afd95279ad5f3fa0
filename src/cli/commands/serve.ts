import closeWithGrace from 'close-with-grace';
import type { Command } from 'commander';
import { loadConfig, parsePort } from '../../config.js';
import { startServer } from '../../server.js';
import type { CliIo } from '../io.js';

export function registerServeCommand(program: Command, io: CliIo): void {
  program
    .command('serve')
    .description('start the HTTP API (applies migrations first)')
    .option('--port <port>', 'port to listen on (env PORT, default 3000)')
    .option('--host <host>', 'address to listen on (env HOST, default 127.0.0.1)')
    .action(async (options: { port?: string; host?: string }) => {
      const config = loadConfig(io.env);
      const port = options.port === undefined ? config.port : parsePort(options.port, '--port');
      const server = await startServer(config, { host: options.host ?? config.host, port });
      io.stderr(`Contacts Read API listening on ${server.url} (${server.store.kind})\n`);
      if (server.metricsUrl) io.stderr(`Prometheus metrics on ${server.metricsUrl}\n`);
      const { logger } = server;
      // On SIGTERM/SIGINT (or a crash) the server stops accepting, in-flight requests finish, pools close,
      // and the process exits 0 — or 1 after SHUTDOWN_TIMEOUT_MS, a second signal, or a crash.
      // Errors are logged through the service logger only, which never writes their messages.
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
    });
}
