import type { FastifyInstance } from 'fastify';
import { createAuthenticator } from '../../src/auth/authenticator.js';
import { buildApp } from '../../src/http/app.js';
import type { Store } from '../../src/store/store.js';
import { TEST_KEY_PREFIX } from './seed.js';

export async function buildTestApp(store: Store): Promise<FastifyInstance> {
  const authenticator = createAuthenticator({ keys: store.keys, apiKeyPrefix: TEST_KEY_PREFIX });
  return buildApp({ store, authenticator, apiKeyPrefix: TEST_KEY_PREFIX, logger: false });
}

export function bearer(key: string): { authorization: string } {
  return { authorization: `Bearer ${key}` };
}
