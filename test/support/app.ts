import type { FastifyInstance } from 'fastify';
import { createAuthenticator } from '../../src/auth/authenticator.js';
import { buildApp, type AppDependencies } from '../../src/http/app.js';
import type { Store } from '../../src/store/store.js';
import { TEST_KEY_PREFIX } from './seed.js';

/** The real app on `store`, without logs or rate limit unless `options` (metrics, rateLimit, http, logger) says so. */
export async function buildTestApp(store: Store, options: Partial<AppDependencies> = {}): Promise<FastifyInstance> {
  const authenticator = createAuthenticator({ keys: store.keys, apiKeyPrefix: TEST_KEY_PREFIX });
  return buildApp({ store, authenticator, apiKeyPrefix: TEST_KEY_PREFIX, logger: false, ...options });
}

export function bearer(key: string): { authorization: string } {
  return { authorization: `Bearer ${key}` };
}
