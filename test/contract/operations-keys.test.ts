import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { hashApiKey, isWellFormedApiKey } from '../../src/domain/api-key.js';
import { NotFoundError } from '../../src/domain/errors.js';
import { CONTACTS_READ } from '../../src/domain/scopes.js';
import { createKey, listKeys, revokeKey, type NewKeyRequest } from '../../src/operations/keys.js';
import { bearer, buildTestApp } from '../support/app.js';
import { describeEachBackend } from '../support/backends.js';
import { createUser, TEST_KEY_PREFIX } from '../support/seed.js';

const DAY = 86_400_000;

describeEachBackend('Operations: keys', (db) => {
  const newKey = (request: Partial<NewKeyRequest> & { user: string }) =>
    createKey(db().store, TEST_KEY_PREFIX, { scopes: [CONTACTS_READ], expires: null, ...request });

  describe('createKey', () => {
    it('gives the plaintext key once, well formed with the prefix; the store keeps only its hash, and the key works', async () => {
      const user = await createUser(db().store);
      const { record, key, planAllowsUse } = await newKey({ user: user.email, label: '  laptop ' });
      expect(isWellFormedApiKey(key, TEST_KEY_PREFIX)).toBe(true);
      expect(record).toMatchObject({ owner_id: user.id, label: 'laptop', scopes: [CONTACTS_READ], expires_at: null, revoked_at: null });
      expect(JSON.stringify(record)).not.toContain(key.slice(9));
      expect((await db().store.keys.findByHash(hashApiKey(key)))?.key).toEqual(record);
      expect(planAllowsUse).toBe(true);
      const app = await buildTestApp(db().store);
      expect((await app.inject({ url: '/api/v1/contacts', headers: bearer(key) })).statusCode).toBe(200);
      await app.close();
    });

    it('a blank label is none; a key with no scope is made, and refused with 403', async () => {
      const user = await createUser(db().store);
      const { record, key } = await newKey({ user: user.id, label: ' ', scopes: [] });
      expect(record).toMatchObject({ label: null, scopes: [] });
      const app = await buildTestApp(db().store);
      const response = await app.inject({ url: '/api/v1/contacts', headers: bearer(key) });
      expect(response.statusCode).toBe(403);
      expect(response.json()).toEqual({ error: 'API key lacks contacts:read' });
      await app.close();
    });

    it('sets expires_at a lifetime from now', async () => {
      const user = await createUser(db().store);
      for (const ms of [30_000, 900_000, 43_200_000, 90 * DAY]) {
        const before = Date.now();
        const { record } = await newKey({ user: user.id, expires: { lifetimeMs: ms } });
        const expiresAt = Date.parse(record.expires_at!);
        expect(expiresAt).toBeGreaterThanOrEqual(before + ms);
        expect(expiresAt).toBeLessThanOrEqual(Date.now() + ms);
      }
    });

    it('says when the owner’s plan refuses keys: the key is made all the same', async () => {
      const user = await createUser(db().store, 'free');
      const { planAllowsUse, record } = await newKey({ user: user.id });
      expect(planAllowsUse).toBe(false);
      expect((await listKeys(db().store, user.id)).map((key) => key.id)).toEqual([record.id]);
    });

    it('refuses an unknown user with NotFoundError naming it', async () => {
      await expect(newKey({ user: 'nobody@example.com' })).rejects.toThrow(
        new NotFoundError('No user with email or id "nobody@example.com"'),
      );
    });
  });

  describe('listKeys', () => {
    it('gives every key of the user, oldest first, with its status and never its secret', async () => {
      const user = await createUser(db().store);
      const first = await newKey({ user: user.id, label: 'one' });
      const second = await newKey({ user: user.email, label: 'two' });
      const expiring = await newKey({ user: user.id, label: 'three', expires: { lifetimeMs: 1 } });
      await revokeKey(db().store, second.record.id);
      await new Promise((resolve) => setTimeout(resolve, 5));
      const listed = await listKeys(db().store, user.email.toUpperCase());
      expect(listed.map((key) => [key.id, key.label, key.status])).toEqual([
        [first.record.id, 'one', 'active'],
        [second.record.id, 'two', 'revoked'],
        [expiring.record.id, 'three', 'expired'],
      ]);
      const text = JSON.stringify(listed);
      for (const { key } of [first, second, expiring]) expect(text).not.toContain(key.slice(9));
      expect(text).not.toMatch(/hash/);
    });
  });

  describe('revokeKey', () => {
    it('stops the key at once and keeps the first revocation time', async () => {
      const user = await createUser(db().store);
      const { record, key } = await newKey({ user: user.id });
      const app = await buildTestApp(db().store);
      expect((await app.inject({ url: '/api/v1/contacts', headers: bearer(key) })).statusCode).toBe(200);
      const revoked = await revokeKey(db().store, record.id);
      expect(revoked).toMatchObject({ id: record.id, revoked_at: expect.stringMatching(/Z$/) });
      expect((await app.inject({ url: '/api/v1/contacts', headers: bearer(key) })).statusCode).toBe(401);
      expect(await revokeKey(db().store, record.id)).toEqual(revoked);
      await app.close();
    });

    it('refuses an unknown or malformed key id with NotFoundError naming it', async () => {
      for (const id of [randomUUID(), 'nope']) {
        await expect(revokeKey(db().store, id)).rejects.toThrow(new NotFoundError(`No key with id "${id}"`));
      }
    });
  });
});
