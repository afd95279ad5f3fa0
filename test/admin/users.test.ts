import { randomUUID } from 'node:crypto';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startAdminApp, type AdminTestServer } from '../support/admin-app.js';
import { bearer, buildTestApp } from '../support/app.js';
import { describeEachBackend } from '../support/backends.js';
import { contactRecord } from '../support/seed.js';

let sequence = 0;
const newEmail = () => `admin-user-${++sequence}-${Date.now()}@example.com`;

/** The users endpoints of the admin API, over a real socket, every answer checked against the admin document. */
describeEachBackend('admin API: users', (db) => {
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

  const createUser = async (body: Record<string, unknown>) => admin.request('POST', '/admin/v1/users', { body });

  describe('POST /users', () => {
    it('creates the user with a new UUID, a trimmed name, on the plan given: 201 with the user', async () => {
      const email = newEmail();
      const created = await createUser({ email, name: '  Ada Lovelace ', plan: 'pro' });
      expect(created.status).toBe(201);
      expect(created.json).toEqual({ id: expect.any(String), email, name: 'Ada Lovelace', plan: 'pro', created_at: expect.any(String) });
      expect(await db().store.users.find(created.json.id)).toEqual(created.json);
      expect((await createUser({ email: newEmail(), name: null, plan: 'free' })).json.name).toBeNull();
      expect((await createUser({ email: newEmail(), name: '   ', plan: 'free' })).json.name).toBeNull();
    });

    it('takes the host’s own id, a UUID in any case, stored lower-case', async () => {
      const id = randomUUID();
      const created = await createUser({ id: id.toUpperCase(), email: newEmail(), plan: 'free' });
      expect(created.status).toBe(201);
      expect(created.json.id).toBe(id);
    });

    it('409 when the id or the email, in any case, is another user’s', async () => {
      const id = randomUUID();
      const email = newEmail();
      await createUser({ id, email, plan: 'free' });
      const sameId = await createUser({ id, email: newEmail(), plan: 'free' });
      expect({ status: sameId.status, body: sameId.json }).toEqual({ status: 409, body: { error: `A user with id ${id} already exists` } });
      const sameEmail = await createUser({ email: email.toUpperCase(), plan: 'free' });
      expect({ status: sameEmail.status, body: sameEmail.json }).toEqual({
        status: 409,
        body: { error: `A user with email ${email.toUpperCase()} already exists` },
      });
    });

    it('400 naming the field: missing, unknown, of the wrong type, not one of the plans, not an email, not a UUID, too long', async () => {
      const cases: [Record<string, unknown>, string][] = [
        [{ plan: 'pro' }, 'email is required'],
        [{ email: newEmail() }, 'plan is required'],
        [{ email: newEmail(), plan: 'pro', nmae: 'Ada' }, 'unknown field "nmae"'],
        [{ email: newEmail(), plan: 'gold' }, 'plan must be one of: free, pro'],
        [{ email: 42, plan: 'pro' }, 'email must be a string'],
        [{ email: newEmail(), plan: 'pro', name: 7 }, 'name must be a string or null'],
        [{ email: 'ada', plan: 'pro' }, 'email must be an email address; got "ada"'],
        [{ email: 'ada at example.com', plan: 'pro' }, 'email must be an email address; got "ada at example.com"'],
        [{ id: 'user-42', email: newEmail(), plan: 'pro' }, 'id must be a UUID'],
        [{ email: newEmail(), plan: 'pro', name: 'x'.repeat(201) }, 'name must NOT have more than 200 characters'],
      ];
      for (const [body, error] of cases) {
        const answer = await createUser(body);
        expect({ body, status: answer.status, error: answer.json.error }).toEqual({ body, status: 400, error });
      }
      const notAnObject = await admin.request('POST', '/admin/v1/users', { body: ['ada@example.com'] });
      expect({ status: notAnObject.status, body: notAnObject.json }).toEqual({ status: 400, body: { error: 'The body must be an object' } });
    });
  });

  describe('GET /users/{id} and GET /users?email=', () => {
    it('gets a user by id, in any case; 404 for an unknown id, a malformed one, or an email in its place', async () => {
      const { json: user } = await createUser({ email: newEmail(), plan: 'pro' });
      for (const id of [user.id, user.id.toUpperCase()]) {
        const found = await admin.request('GET', `/admin/v1/users/${id}`);
        expect({ status: found.status, body: found.json }).toEqual({ status: 200, body: user });
      }
      for (const id of [randomUUID(), 'not-an-id', encodeURIComponent(user.email)]) {
        const missing = await admin.request('GET', `/admin/v1/users/${id}`);
        expect({ status: missing.status, body: missing.json }).toEqual({
          status: 404,
          body: { error: `No user with id "${decodeURIComponent(id)}"` },
        });
      }
    });

    it('finds the user holding an email, ignoring case, as a list of one; an empty list when none', async () => {
      const { json: user } = await createUser({ email: newEmail(), plan: 'free' });
      const found = await admin.request('GET', `/admin/v1/users?email=${encodeURIComponent(user.email.toUpperCase())}`);
      expect({ status: found.status, body: found.json }).toEqual({ status: 200, body: { data: [user] } });
      const none = await admin.request('GET', `/admin/v1/users?email=${encodeURIComponent(newEmail())}`);
      expect({ status: none.status, body: none.json }).toEqual({ status: 200, body: { data: [] } });
    });

    it('400 naming the parameter: no email, not an email, another parameter', async () => {
      for (const [query, error] of [
        ['', 'email is required'],
        ['?email=ada', 'email must be an email address; got "ada"'],
        [`?email=${encodeURIComponent(newEmail())}&plan=pro`, 'unknown field "plan"'],
      ]) {
        const answer = await admin.request('GET', `/admin/v1/users${query}`);
        expect({ query, status: answer.status, error: answer.json.error }).toEqual({ query, status: 400, error });
      }
    });
  });

  describe('PATCH /users/{id}', () => {
    it('changes the fields given and keeps the others; the user’s self row follows the name and email', async () => {
      const { json: user } = await createUser({ email: newEmail(), name: 'Ada', plan: 'free' });
      const email = newEmail();
      const changed = await admin.request('PATCH', `/admin/v1/users/${user.id}`, { body: { email, name: ' Ada L. ' } });
      expect({ status: changed.status, body: changed.json }).toEqual({ status: 200, body: { ...user, email, name: 'Ada L.' } });
      const upgraded = await admin.request('PATCH', `/admin/v1/users/${user.id}`, { body: { plan: 'pro' } });
      expect(upgraded.json).toEqual({ ...user, email, name: 'Ada L.', plan: 'pro' });
      expect((await admin.request('PATCH', `/admin/v1/users/${user.id}`, { body: { name: null } })).json.name).toBeNull();
      expect((await admin.request('PATCH', `/admin/v1/users/${user.id}`, { body: {} })).json).toEqual({
        ...user,
        email,
        name: null,
        plan: 'pro',
      });
    });

    it('a plan change reaches the public API: free gets 403 for the user’s keys, pro 200 again', async () => {
      const { json: user } = await createUser({ email: newEmail(), plan: 'pro' });
      const { json: key } = await admin.request('POST', `/admin/v1/users/${user.id}/keys`, { body: {} });
      const status = async () => (await publicApp.inject({ url: '/api/v1/contacts', headers: bearer(key.key) })).statusCode;
      expect(await status()).toBe(200);
      await admin.request('PATCH', `/admin/v1/users/${user.id}`, { body: { plan: 'free' } });
      expect(await status()).toBe(403);
      await admin.request('PATCH', `/admin/v1/users/${user.id}`, { body: { plan: 'pro' } });
      expect(await status()).toBe(200);
    });

    it('404 for an unknown user, 409 for another user’s email, 400 naming a wrong field', async () => {
      const [{ json: first }, { json: second }] = [
        await createUser({ email: newEmail(), plan: 'free' }),
        await createUser({ email: newEmail(), plan: 'free' }),
      ];
      const unknownId = randomUUID();
      const missing = await admin.request('PATCH', `/admin/v1/users/${unknownId}`, { body: { plan: 'pro' } });
      expect({ status: missing.status, body: missing.json }).toEqual({ status: 404, body: { error: `No user with id "${unknownId}"` } });
      const taken = await admin.request('PATCH', `/admin/v1/users/${second.id}`, { body: { email: first.email.toUpperCase() } });
      expect({ status: taken.status, body: taken.json }).toEqual({
        status: 409,
        body: { error: `A user with email ${first.email.toUpperCase()} already exists` },
      });
      for (const [body, error] of [
        [{ plan: 'enterprise' }, 'plan must be one of: free, pro'],
        [{ id: randomUUID() }, 'unknown field "id"'],
        [{ email: 'nobody' }, 'email must be an email address; got "nobody"'],
      ] as const) {
        const answer = await admin.request('PATCH', `/admin/v1/users/${second.id}`, { body });
        expect({ status: answer.status, error: answer.json.error }).toEqual({ status: 400, error });
      }
    });
  });

  describe('DELETE /users/{id}', () => {
    it('204: the user, their keys, OAuth records bound to them and contacts are gone, and the keys answer 401', async () => {
      const { store } = db();
      const { json: user } = await createUser({ email: newEmail(), plan: 'pro' });
      const { json: key } = await admin.request('POST', `/admin/v1/users/${user.id}/keys`, { body: {} });
      await store.contacts.importContacts(user.id, [contactRecord({ name: 'Grace' })]);
      const grant = { kind: 'Grant', idHash: `grant-${randomUUID()}`, payload: '{}', grantId: null, uidHash: null, accountId: key.id };
      await store.oauth.save({ ...grant, expiresAt: new Date(Date.now() + 3_600_000).toISOString() });
      expect((await publicApp.inject({ url: '/api/v1/contacts', headers: bearer(key.key) })).statusCode).toBe(200);

      const deleted = await admin.request('DELETE', `/admin/v1/users/${user.id}`);
      expect({ status: deleted.status, body: deleted.text }).toEqual({ status: 204, body: '' });
      expect(await store.users.find(user.id)).toBeNull();
      expect(await store.keys.findById(key.id)).toBeNull();
      expect(await store.oauth.find('Grant', grant.idHash, new Date().toISOString())).toBeNull();
      expect((await store.contacts.listPage(user.id, { limit: 10, offset: 0 })).total).toBe(0);
      expect((await publicApp.inject({ url: '/api/v1/contacts', headers: bearer(key.key) })).statusCode).toBe(401);
      const again = await admin.request('DELETE', `/admin/v1/users/${user.id}`);
      expect({ status: again.status, body: again.json }).toEqual({ status: 404, body: { error: `No user with id "${user.id}"` } });
    });
  });
});
