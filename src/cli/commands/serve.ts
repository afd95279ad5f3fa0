import type { Command } from 'commander';
import { loadConfig, parsePort } from '../../config.js';
import { startServer } from '../../server.js';
import type { CliIo } from '../io.js';

const SHUTDOWN_TIMEOUT_MS = 10_000;

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
      await new Promise<void>((resolve) => {
        const stop = () => {
          process.off('SIGINT', stop);
          process.off('SIGTERM', stop);
          // In-flight requests finish; a shutdown that hangs past the bound exits anyway.
          setTimeout(() => process.exit(1), SHUTDOWN_TIMEOUT_MS).unref();
          server.close().then(resolve, resolve);
        };
        process.once('SIGINT', stop);
        process.once('SIGTERM', stop);
      });
    });
}
