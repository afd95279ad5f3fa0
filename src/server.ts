import type { Server, ServerResponse } from 'node:http';
import type { FastifyInstance } from 'fastify';
import { pino } from 'pino';
import { createAuthenticator } from './auth/authenticator.js';
import type { Config } from './config.js';
import { buildApp } from './http/app.js';
import { openStore } from './store/open-store.js';
import type { Store } from './store/store.js';

export interface RunningServer {
  app: FastifyInstance;
  store: Store;
  url: string;
  close(): Promise<void>;
}

function countInflightRequests(server: Server): () => number {
  let inflight = 0;
  server.on('request', (_request, response: ServerResponse) => {
    inflight += 1;
    response.once('close', () => {
      inflight -= 1;
    });
  });
  return () => inflight;
}

/** The log never carries keys: the Authorization header is redacted wherever it could appear. */
export function createLogger(level: string) {
  return pino({
    level,
    redact: { paths: ['req.headers.authorization', 'headers.authorization', 'authorization'], censor: '[redacted]' },
  });
}

/** Opens the database, applies migrations and listens. */
export async function startServer(config: Config, listen: { host: string; port: number }): Promise<RunningServer> {
  const logger = createLogger(config.logLevel);
  const store = await openStore(config.database);
  try {
    const applied = await store.migrate();
    if (applied.length > 0) logger.info({ versions: applied }, 'applied database migrations');
    const authenticator = createAuthenticator({
      keys: store.keys,
      apiKeyPrefix: config.apiKeyPrefix,
      onTouchError: (error) => logger.warn({ err: error }, 'could not record API key use'),
    });
    const app = await buildApp({ store, authenticator, apiKeyPrefix: config.apiKeyPrefix, logger });
    const url = await app.listen({ host: listen.host, port: listen.port });
    const inflight = countInflightRequests(app.server);
    return {
      app,
      store,
      url,
      close: async () => {
        // In-flight requests finish; then every kept-alive socket is closed, idle or not yet used, so none
        // holds the process open until its keep-alive timeout.
        const sweep = setInterval(() => {
          if (inflight() === 0) app.server.closeAllConnections();
        }, 50);
        try {
          await app.close();
        } finally {
          clearInterval(sweep);
        }
        await store.close();
      },
    };
  } catch (error) {
    await store.close();
    throw error;
  }
}
