import { randomUUID } from 'node:crypto';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { hashApiKey, isWellFormedApiKey } from '../../src/domain/api-key.js';
import { startAdminApp, type AdminTestServer } from '../support/admin-app.js';
import { bearer, buildTestApp } from '../support/app.js';
import { describeEachBackend } from '../support/backends.js';
import { createUser, TEST_KEY_PREFIX } from '../support/seed.js';

const HOUR_MS = 3_600_000;

/** The keys endpoints of the admin API, over a real socket, every answer checked against the admin document. */
describeEachBackend('admin API: keys', (db) => {
  let admin: AdminTestServer;
  let publicApp: FastifyInstance;

  beforeAll(async () => {
    admin = await startAdminApp(db().store);
    publicApp = await buildTestApp(db().store);
  });
  afterAll(async () => {
    await admin?.close();
    await publicApp?.close();
  });

  const makeKey = (userId: string, body: Record<string, unknown> = {}) => admin.request('POST', `/admin/v1/users/${userId}/keys`, { body });
  const listed = async (userId: string) => (await admin.request('GET', `/admin/v1/users/${userId}/keys`)).json.data as any[];
  const publicStatus = async (key: string) => (await publicApp.inject({ url: '/api/v1/contacts', headers: bearer(key) })).statusCode;

  describe('POST /users/{id}/keys', () => {
    it('201 with the key, shown this once: well formed, working, its start shown, only its hash stored', async () => {
      const user = await createUser(db().store);
      const created = await makeKey(user.id, { label: '  Zapier ' });
      expect(created.status).toBe(201);
      const { key, ...rest } = created.json;
      expect(rest).toEqual({
        id: expect.any(String),
        start: `${key.slice(0, 13)}…${key.slice(-4)}`,
        label: 'Zapier',
        scopes: ['contacts:read'],
        created_at: expect.any(String),
        expires_at: null,
      });
      expect(isWellFormedApiKey(key, TEST_KEY_PREFIX)).toBe(true);
      expect((await db().store.keys.findByHash(hashApiKey(key)))?.key.id).toBe(created.json.id);
      expect(JSON.stringify(await listed(user.id))).not.toContain(key.slice(13, -4));
      expect(await publicStatus(key)).toBe(200);
    });

    it('takes scopes (none: the key gets 403) and an expiry in the future, normalized to UTC milliseconds', async () => {
      const user = await createUser(db().store);
      const unscoped = await makeKey(user.id, { scopes: [], label: null });
      expect(unscoped.json).toMatchObject({ scopes: [], label: null });
      expect(await publicStatus(unscoped.json.key)).toBe(403);
      const at = new Date(Date.now() + HOUR_MS);
      const expiring = await makeKey(user.id, { expires_at: at.toISOString().replace('Z', '+00:00') });
      expect(expiring.json.expires_at).toBe(at.toISOString());
      expect(await publicStatus(expiring.json.key)).toBe(200);
    });

    it('a key of a free user is made, and refused with 403 until the user is on pro', async () => {
      const user = await createUser(db().store, 'free');
      const created = await makeKey(user.id);
      expect(created.status).toBe(201);
      expect(await publicStatus(created.json.key)).toBe(403);
    });

    it('400 naming the field: an expiry past or malformed, an unknown or repeated scope, an unknown field', async () => {
      const user = await createUser(db().store);
      const past = '2020-01-01T00:00:00Z';
      for (const [body, error] of [
        [{ expires_at: past }, `expires_at must be a time in the future; got "${past}"`],
        [{ expires_at: 'next week' }, 'expires_at must be a date and time in RFC 3339 form, like 2026-05-01T09:30:00Z'],
        [{ scopes: ['contacts:write'] }, 'scopes.0 must be one of: contacts:read'],
        [{ scopes: ['contacts:read', 'contacts:read'] }, 'scopes must NOT have duplicate items (items ## 1 and 0 are identical)'],
        [{ scopes: 'contacts:read' }, 'scopes must be an array'],
        [{ label: 'x'.repeat(201) }, 'label must NOT have more than 200 characters'],
        [{ owner_id: randomUUID() }, 'unknown field "owner_id"'],
      ] as const) {
        const answer = await makeKey(user.id, body);
        expect({ body, status: answer.status, error: answer.json.error }).toEqual({ body, status: 400, error });
      }
      expect(await listed(user.id)).toEqual([]);
    });

    it('404 for an unknown user, a malformed id, or an email in the id’s place', async () => {
      const user = await createUser(db().store);
      for (const id of [randomUUID(), 'someone', encodeURIComponent(user.email)]) {
        const answer = await makeKey(id);
        expect({ status: answer.status, body: answer.json }).toEqual({
          status: 404,
          body: { error: `No user with id "${decodeURIComponent(id)}"` },
        });
      }
    });
  });

  describe('GET /users/{id}/keys', () => {
    it('every key, oldest first, with its status, and last_used_at once the key is used; never a secret nor a hash', async () => {
      const { store } = db();
      const user = await createUser(store);
      const active = (await makeKey(user.id, { label: 'one' })).json;
      const revoked = (await makeKey(user.id, { label: 'two' })).json;
      const expiring = (await makeKey(user.id, { label: 'three', expires_at: new Date(Date.now() + 300).toISOString() })).json;
      await admin.request('DELETE', `/admin/v1/keys/${revoked.id}`);
      await new Promise((resolve) => setTimeout(resolve, 350));
      const keys = await listed(user.id);
      expect(keys.map((key) => [key.id, key.label, key.status])).toEqual([
        [active.id, 'one', 'active'],
        [revoked.id, 'two', 'revoked'],
        [expiring.id, 'three', 'expired'],
      ]);
      expect(Object.keys(keys[0]).sort()).toEqual(
        ['created_at', 'expires_at', 'id', 'label', 'last_used_at', 'revoked_at', 'scopes', 'start', 'status'].sort(),
      );
      expect(keys[0]).toMatchObject({ start: active.start, last_used_at: null, revoked_at: null });
      expect(keys[1].revoked_at).not.toBeNull();
      expect(JSON.stringify(keys)).not.toMatch(new RegExp([active, revoked, expiring].map((key) => key.key).join('|')));
      const usedAt = Date.now();
      expect(await publicStatus(active.key)).toBe(200);
      await vi.waitFor(async () => expect(Date.parse((await listed(user.id))[0].last_used_at)).toBeGreaterThanOrEqual(usedAt - 1000), {
        timeout: 5_000,
        interval: 50,
      });
    });

    it('an empty list for a user without keys; 404 for an unknown user', async () => {
      const user = await createUser(db().store);
      expect(await admin.request('GET', `/admin/v1/users/${user.id}/keys`).then((answer) => [answer.status, answer.json])).toEqual([
        200,
        { data: [] },
      ]);
      const unknown = randomUUID();
      const missing = await admin.request('GET', `/admin/v1/users/${unknown}/keys`);
      expect([missing.status, missing.json]).toEqual([404, { error: `No user with id "${unknown}"` }]);
    });
  });

  describe('POST /keys/{keyId}/rotate', () => {
    it('201: the successor has the owner, label, scopes and expiry; the old key stops now by default', async () => {
      const user = await createUser(db().store);
      const expiresAt = new Date(Date.now() + 48 * HOUR_MS).toISOString();
      const old = (await makeKey(user.id, { label: 'CI', scopes: [], expires_at: expiresAt })).json;
      const rotated = await admin.request('POST', `/admin/v1/keys/${old.id}/rotate`, {});
      expect(rotated.status).toBe(201);
      expect(rotated.json).toEqual({
        id: expect.any(String),
        key: expect.any(String),
        start: expect.any(String),
        label: 'CI',
        scopes: [],
        created_at: expect.any(String),
        expires_at: expiresAt,
        replaces: old.id,
      });
      expect(rotated.json.key).not.toBe(old.key);
      expect((await listed(user.id)).map((key) => [key.id, key.status])).toEqual([
        [old.id, 'expired'],
        [rotated.json.id, 'active'],
      ]);
      expect(await publicStatus(old.key)).toBe(401);
    });

    it('overlap_seconds lets the old key work that much longer, beside the new one, never longer than it would', async () => {
      const user = await createUser(db().store);
      const old = (await makeKey(user.id)).json;
      const before = Date.now();
      const rotated = (await admin.request('POST', `/admin/v1/keys/${old.id}/rotate`, { body: { overlap_seconds: 3600 } })).json;
      const oldExpiry = Date.parse((await listed(user.id))[0].expires_at);
      expect(oldExpiry).toBeGreaterThanOrEqual(before + HOUR_MS);
      expect(oldExpiry).toBeLessThanOrEqual(Date.now() + HOUR_MS);
      expect([await publicStatus(old.key), await publicStatus(rotated.key)]).toEqual([200, 200]);
      // Rotated again while it still works, with a longer overlap: it keeps its earlier end.
      expect((await admin.request('POST', `/admin/v1/keys/${old.id}/rotate`, { body: { overlap_seconds: 604_800 } })).status).toBe(201);
      expect(Date.parse((await listed(user.id))[0].expires_at)).toBe(oldExpiry);
    });

    it('409 for a revoked or expired key, 404 for an unknown one, 400 naming overlap_seconds out of bounds', async () => {
      const user = await createUser(db().store);
      const revoked = (await makeKey(user.id)).json;
      await admin.request('DELETE', `/admin/v1/keys/${revoked.id}`);
      const refusedRevoked = await admin.request('POST', `/admin/v1/keys/${revoked.id}/rotate`, { body: {} });
      expect([refusedRevoked.status, refusedRevoked.json]).toEqual([409, { error: `Key ${revoked.id} is revoked and cannot be rotated` }]);
      const expired = (await makeKey(user.id, { expires_at: new Date(Date.now() + 200).toISOString() })).json;
      await new Promise((resolve) => setTimeout(resolve, 250));
      const refusedExpired = await admin.request('POST', `/admin/v1/keys/${expired.id}/rotate`, { body: {} });
      expect([refusedExpired.status, refusedExpired.json]).toEqual([409, { error: `Key ${expired.id} has expired and cannot be rotated` }]);
      for (const keyId of [randomUUID(), 'key-1']) {
        const missing = await admin.request('POST', `/admin/v1/keys/${keyId}/rotate`, { body: {} });
        expect([missing.status, missing.json]).toEqual([404, { error: `No key with id "${keyId}"` }]);
      }
      const active = (await makeKey(user.id)).json;
      for (const [overlap, error] of [
        [604_801, 'overlap_seconds must be <= 604800'],
        [-1, 'overlap_seconds must be >= 0'],
        [1.5, 'overlap_seconds must be an integer'],
        ['60', 'overlap_seconds must be an integer'],
      ] as const) {
        const answer = await admin.request('POST', `/admin/v1/keys/${active.id}/rotate`, { body: { overlap_seconds: overlap } });
        expect({ overlap, status: answer.status, error: answer.json.error }).toEqual({ overlap, status: 400, error });
      }
    });
  });

  describe('DELETE /keys/{keyId}', () => {
    it('204: the key gets 401 at once; revoking again is 204 and keeps the first time; 404 for an unknown key', async () => {
      const user = await createUser(db().store);
      const key = (await makeKey(user.id)).json;
      expect(await publicStatus(key.key)).toBe(200);
      const revoked = await admin.request('DELETE', `/admin/v1/keys/${key.id}`);
      expect([revoked.status, revoked.text]).toEqual([204, '']);
      expect(await publicStatus(key.key)).toBe(401);
      const firstTime = (await listed(user.id))[0].revoked_at;
      expect((await admin.request('DELETE', `/admin/v1/keys/${key.id}`)).status).toBe(204);
      expect((await listed(user.id))[0].revoked_at).toBe(firstTime);
      const unknown = randomUUID();
      const missing = await admin.request('DELETE', `/admin/v1/keys/${unknown}`);
      expect([missing.status, missing.json]).toEqual([404, { error: `No key with id "${unknown}"` }]);
    });
  });
});
