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
    return {
      app,
      store,
      url,
      close: async () => {
        await app.close();
        await store.close();
      },
    };
  } catch (error) {
    await store.close();
    throw error;
  }
}
