import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAuthenticator, LAST_USED_RESOLUTION_MS } from '../../src/auth/authenticator.js';
import { generateApiKey } from '../../src/domain/api-key.js';
import type { KeyStore, Store } from '../../src/store/store.js';
import { buildTestApp } from '../support/app.js';
import { describeEachBackend } from '../support/backends.js';
import { listContacts } from '../support/requests.js';
import { createKey, createUser, importNumberedContacts, TEST_KEY_PREFIX } from '../support/seed.js';

const INVALID = { error: 'Invalid or inactive API key' };

describeEachBackend('authentication and authorization (spec §5)', (db) => {
  let app: FastifyInstance;
  let store: Store;
  let ownerId: string;
  let validKey: string;

  beforeAll(async () => {
    store = db().store;
    const owner = await createUser(store);
    ownerId = owner.id;
    await importNumberedContacts(store, owner.id, 3, 'Auth');
    validKey = (await createKey(store, owner.id)).key;
    app = await buildTestApp(store);
  });
  afterAll(async () => {
    await app?.close();
  });

  it('accepts a valid key, with the scheme word in any case', async () => {
    for (const scheme of ['Bearer', 'bearer', 'BEARER', 'BeArEr']) {
      const response = await listContacts(app, null, '', { authorization: `${scheme} ${validKey}` });
      expect(response.statusCode).toBe(200);
      expect(response.json().pagination.total).toBe(3);
    }
  });

  describe('401 with the same body and header whatever is wrong', () => {
    const malformed = (key: string) =>
      [
        ['no Authorization header', {}],
        ['a Basic scheme', { authorization: `Basic ${Buffer.from(`user:${key}`).toString('base64')}` }],
        ['a Token scheme', { authorization: `Token ${key}` }],
        ['the key without a scheme', { authorization: key }],
        ['an empty token', { authorization: 'Bearer ' }],
        ['only the scheme', { authorization: 'Bearer' }],
        ['two tokens', { authorization: `Bearer ${key} ${key}` }],
        ['a malformed key', { authorization: 'Bearer not-a-key' }],
        ['another prefix', { authorization: `Bearer ${key.replace(/^cnt_/, 'xyz_')}` }],
        ['a test-mode key', { authorization: `Bearer ${key.replace('_live_', '_test_')}` }],
        ['a bad checksum', { authorization: `Bearer ${key.slice(0, -1)}${key.endsWith('A') ? 'B' : 'A'}` }],
        ['a mistyped secret', { authorization: `Bearer ${key.slice(0, 12)}${key[12] === 'x' ? 'y' : 'x'}${key.slice(13)}` }],
        ['a truncated key', { authorization: `Bearer ${key.slice(0, -3)}` }],
      ] as const;

    it.each(malformed('cnt_live_PLACEHOLDER').map(([name]) => name))('%s', async (name) => {
      const [, headers] = malformed(validKey).find(([candidate]) => candidate === name)!;
      const response = await listContacts(app, null, '', headers as Record<string, string>);
      expect(response.statusCode).toBe(401);
      expect(response.json()).toEqual(INVALID);
      expect(response.headers['www-authenticate']).toBe('Bearer realm="contacts-api"');
    });

    it('an unknown but well-formed key', async () => {
      const response = await listContacts(app, generateApiKey(TEST_KEY_PREFIX));
      expect(response.statusCode).toBe(401);
      expect(response.json()).toEqual(INVALID);
      expect(response.headers['www-authenticate']).toBe('Bearer realm="contacts-api"');
    });

    it('a revoked key', async () => {
      const { id, key } = await createKey(store, ownerId);
      expect((await listContacts(app, key)).statusCode).toBe(200);
      await store.keys.revoke(id);
      const response = await listContacts(app, key);
      expect(response.statusCode).toBe(401);
      expect(response.json()).toEqual(INVALID);
    });

    it('an expired key', async () => {
      const { key } = await createKey(store, ownerId, { expiresAt: new Date(Date.now() - 1000).toISOString() });
      const response = await listContacts(app, key);
      expect(response.statusCode).toBe(401);
      expect(response.json()).toEqual(INVALID);
      const { key: future } = await createKey(store, ownerId, { expiresAt: new Date(Date.now() + 60_000).toISOString() });
      expect((await listContacts(app, future)).statusCode).toBe(200);
    });

    it('a key in the URL is never read', async () => {
      for (const name of ['api_key', 'access_token']) {
        const response = await listContacts(app, null, `${name}=${validKey}`);
        expect(response.statusCode).toBe(401);
        expect(response.json()).toEqual(INVALID);
      }
    });
  });

  describe('403', () => {
    it('a valid key without contacts:read', async () => {
      const { key } = await createKey(store, ownerId, { scopes: [] });
      const response = await listContacts(app, key);
      expect(response.statusCode).toBe(403);
      expect(response.json()).toEqual({ error: 'API key lacks contacts:read' });
    });

    it('a free plan, which stops working keys and is restored by upgrading', async () => {
      const user = await createUser(store, 'pro');
      const { key } = await createKey(store, user.id);
      expect((await listContacts(app, key)).statusCode).toBe(200);
      await store.users.setPlan(user.id, 'free');
      const response = await listContacts(app, key);
      expect(response.statusCode).toBe(403);
      expect(response.json()).toEqual({ error: 'API access requires a Pro plan' });
      await store.users.setPlan(user.id, 'pro');
      expect((await listContacts(app, key)).statusCode).toBe(200);
    });
  });

  describe('key use tracking', () => {
    it('records last_used_at on use, at most once per minute per key', async () => {
      const user = await createUser(store);
      const { id, key } = await createKey(store, user.id);
      let now = Date.parse('2030-01-01T00:00:00.000Z');
      const clockApp = await buildTestApp(store, {
        authenticator: createAuthenticator({ keys: store.keys, apiKeyPrefix: TEST_KEY_PREFIX, now: () => now }),
      });
      const lastUsed = async () => (await store.keys.listForOwner(user.id)).find((k) => k.id === id)!.last_used_at;
      const settle = () => new Promise((resolve) => setTimeout(resolve, 50));
      expect(await lastUsed()).toBeNull();
      await listContacts(clockApp, key);
      await settle();
      expect(await lastUsed()).toBe('2030-01-01T00:00:00.000Z');
      now += LAST_USED_RESOLUTION_MS - 1000;
      await listContacts(clockApp, key);
      await settle();
      expect(await lastUsed()).toBe('2030-01-01T00:00:00.000Z');
      now += 2000;
      await listContacts(clockApp, key);
      await settle();
      expect(await lastUsed()).toBe('2030-01-01T00:01:01.000Z');
      await clockApp.close();
    });

    it('rejects malformed keys and bad checksums without a database lookup', async () => {
      let lookups = 0;
      const keys: KeyStore = Object.assign(Object.create(store.keys) as KeyStore, {
        findByHash: async (hash: string) => {
          lookups += 1;
          return store.keys.findByHash(hash);
        },
      });
      const spyApp = await buildTestApp(store, { authenticator: createAuthenticator({ keys, apiKeyPrefix: TEST_KEY_PREFIX }) });
      const badChecksum = `${validKey.slice(0, -1)}${validKey.endsWith('A') ? 'B' : 'A'}`;
      for (const authorization of ['Bearer nope', `Bearer ${badChecksum}`, 'Basic abc', '']) {
        expect((await listContacts(spyApp, null, '', { authorization })).statusCode).toBe(401);
      }
      expect(lookups).toBe(0);
      expect((await listContacts(spyApp, validKey)).statusCode).toBe(200);
      expect(lookups).toBe(1);
      await spyApp.close();
    });
  });
});
