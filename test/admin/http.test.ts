import { randomUUID } from 'node:crypto';
import { request as httpRequest } from 'node:http';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startAdminApp, TEST_ADMIN_TOKEN, type AdminTestServer } from '../support/admin-app.js';
import { bearer, buildTestApp } from '../support/app.js';
import { describeEachBackend } from '../support/backends.js';
import { captureLogs } from '../support/log-capture.js';
import { createKey, createUser, importNumberedContacts } from '../support/seed.js';

const MIB = 1024 * 1024;

type JsonBody = { content: Record<string, { schema: { required?: string[] } }> };

/** What every admin operation shares: the admin token, the HTTP layer's refusals, JSON bodies, the log, the document. */
describeEachBackend('admin API: the token, the HTTP layer, the log and the document', (db) => {
  let admin: AdminTestServer;
  let publicApp: FastifyInstance;
  const logs = captureLogs('info');

  beforeAll(async () => {
    admin = await startAdminApp(db().store, { logger: logs.logger });
    publicApp = await buildTestApp(db().store);
  });
  afterAll(async () => {
    await admin?.close();
    await publicApp?.close();
  });

  /** The POST and DELETE operations without a body, or whose JSON body has no required field: each may be called without one. */
  const operationsNeedingNoBody = () =>
    Object.values(admin.document.paths)
      .flatMap((operations) => Object.entries(operations as unknown as Record<string, { operationId: string; requestBody?: JsonBody }>))
      .filter(([method, { requestBody }]) => {
        if (method !== 'post' && method !== 'delete') return false;
        if (requestBody === undefined) return true;
        const [type, ...others] = Object.keys(requestBody.content);
        return type === 'application/json' && others.length === 0 && (requestBody.content[type]!.schema.required ?? []).length === 0;
      })
      .map(([, { operationId }]) => operationId)
      .sort();

  /** One concrete request per operation of the document. */
  const everyOperation = () => {
    const id = randomUUID();
    return Object.entries(admin.document.paths).flatMap(([path, operations]) =>
      Object.keys(operations).map((method) => [method.toUpperCase(), path.replace(/\{[^}]+\}/g, id)] as const),
    );
  };

  describe('the admin token', () => {
    it('every operation answers 401 with WWW-Authenticate to no token, another, a longer or shorter one, or a user’s API key', async () => {
      const user = await createUser(db().store);
      const { key } = await createKey(db().store, user.id);
      const wrong = [null, 'x'.repeat(TEST_ADMIN_TOKEN.length), `${TEST_ADMIN_TOKEN}x`, TEST_ADMIN_TOKEN.slice(0, -1), key];
      for (const [method, path] of everyOperation()) {
        for (const token of wrong) {
          const answer = await admin.request(method, path, { token, ...(method === 'POST' || method === 'PATCH' ? { body: {} } : {}) });
          expect({ method, path, status: answer.status, body: answer.json }).toEqual({
            method,
            path,
            status: 401,
            body: { error: 'Missing or invalid admin token' },
          });
          expect(answer.headers.get('www-authenticate')).toBe('Bearer realm="contacts-admin"');
        }
      }
      const basic = await admin.request('GET', '/admin/v1/openapi.json', {
        token: null,
        headers: { authorization: `Basic ${Buffer.from(`admin:${TEST_ADMIN_TOKEN}`).toString('base64')}` },
      });
      expect(basic.status).toBe(401);
    });

    it('takes the Bearer scheme in any case', async () => {
      const answer = await admin.request('GET', '/admin/v1/openapi.json', {
        token: null,
        headers: { authorization: `bearer ${TEST_ADMIN_TOKEN}` },
      });
      expect(answer.status).toBe(200);
    });
  });

  describe('the HTTP layer', () => {
    it('404 for a path with no operation, 405 with Allow for a method a path does not serve', async () => {
      for (const token of [TEST_ADMIN_TOKEN, null]) {
        const missing = await admin.request('GET', '/admin/v1/user', { token });
        expect([missing.status, missing.json]).toEqual([404, { error: 'No such endpoint: GET /admin/v1/user' }]);
      }
      const wrongMethod = await admin.request('PUT', `/admin/v1/users/${randomUUID()}`, { body: {} });
      expect(wrongMethod.status).toBe(405);
      expect(wrongMethod.headers.get('allow')).toBe('DELETE, GET, PATCH');
    });

    it('415 for a body that is not JSON or has no Content-Type; 400 for JSON that does not parse', async () => {
      const otherTypes: Record<string, string>[] = [
        { 'content-type': 'text/plain' },
        { 'content-type': 'application/x-www-form-urlencoded' },
        {},
      ];
      for (const headers of otherTypes) {
        const answer = await admin.request('POST', '/admin/v1/users', { raw: new TextEncoder().encode('email=ada@example.com'), headers });
        expect({ headers, status: answer.status, body: answer.json }).toEqual({
          headers,
          status: 415,
          body: { error: 'Content-Type must be application/json' },
        });
      }
      const json = { 'content-type': 'application/json' };
      const broken = await admin.request('POST', '/admin/v1/users', { raw: '{"email":', headers: json });
      expect([broken.status, broken.json]).toEqual([
        400,
        { error: "Body is not valid JSON but content-type is set to 'application/json'" },
      ]);
      const poisoned = await admin.request('POST', '/admin/v1/users', {
        raw: '{"__proto__":{"plan":"pro"},"email":"a@b.c"}',
        headers: json,
      });
      expect(poisoned.status).toBe(400);
    });

    it('a call without a body may say Content-Type: application/json, as many HTTP wrappers do on every call: it has no body', async () => {
      for (const type of ['application/json', 'application/json; charset=utf-8']) {
        const user = await createUser(db().store);
        const key = await createKey(db().store, user.id);
        const { json: webhook } = await admin.request('POST', `/admin/v1/users/${user.id}/webhooks`, {
          body: { url: 'https://hooks.example.com/bodiless' },
        });
        await importNumberedContacts(db().store, user.id, 1, 'Bodiless');
        const [contact] = (await db().store.contacts.listPage(user.id, { limit: 1, offset: 0 })).contacts;
        const calls: Record<string, [method: string, path: string, status: number]> = {
          createKey: ['POST', `/admin/v1/users/${user.id}/keys`, 201],
          rotateKey: ['POST', `/admin/v1/keys/${key.id}/rotate`, 201],
          rotateWebhookSecret: ['POST', `/admin/v1/webhooks/${webhook.id}/rotate-secret`, 200],
          deleteContact: ['DELETE', `/admin/v1/users/${user.id}/contacts/${contact!.id}`, 204],
          deleteWebhook: ['DELETE', `/admin/v1/webhooks/${webhook.id}`, 204],
          revokeKey: ['DELETE', `/admin/v1/keys/${key.id}`, 204],
          deleteUser: ['DELETE', `/admin/v1/users/${user.id}`, 204],
        };
        expect(Object.keys(calls).sort()).toEqual(operationsNeedingNoBody());
        for (const [operation, [method, path, status]] of Object.entries(calls)) {
          const answer = await admin.request(method, path, { headers: { 'content-type': type } });
          expect({ operation, type, status: answer.status, error: answer.json?.error }).toEqual({
            operation,
            type,
            status,
            error: undefined,
          });
        }
      }
      // An operation whose body has required fields names the first missing, as it does without the header.
      const withHeader = { raw: '', headers: { 'content-type': 'application/json' } };
      for (const request of [withHeader, {}]) {
        const empty = await admin.request('POST', '/admin/v1/users', request);
        expect([empty.status, empty.json]).toEqual([400, { error: 'email is required' }]);
      }
    });

    it('413 for a body over 1 MiB, declared or sent in chunks', async () => {
      const sent = await admin.request('POST', '/admin/v1/users', { body: { email: 'a@example.com', plan: 'pro', name: 'x'.repeat(MIB) } });
      expect([sent.status, sent.json]).toEqual([413, { error: 'Request body is too large: at most 1048576 bytes' }]);
      // A body of no declared length is refused once it passes the limit.
      const chunked = await new Promise<number>((resolve, reject) => {
        const request = httpRequest(`${admin.url}/admin/v1/users`, {
          method: 'POST',
          headers: { authorization: `Bearer ${TEST_ADMIN_TOKEN}`, 'content-type': 'application/json', 'transfer-encoding': 'chunked' },
        });
        request.on('response', (response) => resolve(response.statusCode!));
        request.on('error', reject);
        request.write(`{"name":"${'x'.repeat(MIB)}`);
        request.end('"}');
      });
      expect(chunked).toBe(413);
    });

    it('/admin/… on the public app is a 404 like any unknown path, token or not', async () => {
      for (const headers of [{}, bearer(TEST_ADMIN_TOKEN)]) {
        const answer = await publicApp.inject({ method: 'GET', url: '/admin/v1/openapi.json', headers });
        expect([answer.statusCode, answer.json()]).toEqual([404, { error: 'No such endpoint: GET /admin/v1/openapi.json' }]);
      }
    });
  });

  describe('the log', () => {
    it('one line per call: method, path, route, the ids acted on, the status; never the token or a key', async () => {
      const email = `logged-${randomUUID()}@example.com`;
      const { json: user } = await admin.request('POST', '/admin/v1/users', { body: { email, plan: 'pro' } });
      const { json: created } = await admin.request('POST', `/admin/v1/users/${user.id}/keys`, {
        body: {},
        headers: { 'idempotency-key': 'log-1' },
      });
      await admin.request('POST', `/admin/v1/users/${user.id}/keys`, { body: {}, headers: { 'idempotency-key': 'log-1' } });
      const { json: rotated } = await admin.request('POST', `/admin/v1/keys/${created.id}/rotate`, { body: {} });
      await admin.request('DELETE', `/admin/v1/keys/${rotated.id}`);
      await admin.request('GET', `/admin/v1/keys/${created.key}`, { token: created.key });
      await admin.request('GET', `/admin/v1/users/${user.id}`, { token: `${TEST_ADMIN_TOKEN}-wrong` });

      const calls = logs
        .lines()
        .filter((line) => line.msg === 'admin call' && JSON.stringify(line).match(new RegExp(`${user.id}|${created.id}|redacted`)));
      expect(
        calls.map(({ level: _level, time: _time, pid: _pid, hostname: _hostname, reqId: _reqId, msg: _msg, ...call }) => call),
      ).toEqual([
        { method: 'POST', path: '/admin/v1/users', route: '/admin/v1/users', userId: user.id, status: 201 },
        {
          method: 'POST',
          path: `/admin/v1/users/${user.id}/keys`,
          route: '/admin/v1/users/:id/keys',
          userId: user.id,
          keyId: created.id,
          status: 201,
        },
        {
          method: 'POST',
          path: `/admin/v1/users/${user.id}/keys`,
          route: '/admin/v1/users/:id/keys',
          userId: user.id,
          status: 201,
          replayed: true,
        },
        {
          method: 'POST',
          path: `/admin/v1/keys/${created.id}/rotate`,
          route: '/admin/v1/keys/:keyId/rotate',
          userId: user.id,
          keyId: created.id,
          newKeyId: rotated.id,
          status: 201,
        },
        {
          method: 'DELETE',
          path: `/admin/v1/keys/${rotated.id}`,
          route: '/admin/v1/keys/:keyId',
          userId: user.id,
          keyId: rotated.id,
          status: 204,
        },
        { method: 'GET', path: '/admin/v1/keys/[redacted]', status: 405 },
        { method: 'GET', path: `/admin/v1/users/${user.id}`, route: '/admin/v1/users/:id', userId: user.id, status: 401 },
      ]);
      const text = logs.text();
      for (const secret of [TEST_ADMIN_TOKEN, created.key, rotated.key, created.key.slice(9), email]) expect(text).not.toContain(secret);
    });

    it('a webhook call notes the endpoint and its owner; never its secret nor its URL', async () => {
      const user = await createUser(db().store);
      const url = `https://hooks.example.com/${randomUUID()}`;
      const { json: webhook } = await admin.request('POST', `/admin/v1/users/${user.id}/webhooks`, { body: { url } });
      const { json: rotated } = await admin.request('POST', `/admin/v1/webhooks/${webhook.id}/rotate-secret`);
      await admin.request('PATCH', `/admin/v1/webhooks/${webhook.id}`, { body: { status: 'disabled' } });
      await admin.request('DELETE', `/admin/v1/webhooks/${webhook.id}`);
      const calls = logs.lines().filter((line) => line.msg === 'admin call' && line.webhookId === webhook.id);
      expect(calls.map(({ method, route, userId, status }) => ({ method, route, userId, status }))).toEqual([
        { method: 'POST', route: '/admin/v1/users/:id/webhooks', userId: user.id, status: 201 },
        { method: 'POST', route: '/admin/v1/webhooks/:webhookId/rotate-secret', userId: user.id, status: 200 },
        { method: 'PATCH', route: '/admin/v1/webhooks/:webhookId', userId: user.id, status: 200 },
        { method: 'DELETE', route: '/admin/v1/webhooks/:webhookId', userId: undefined, status: 204 },
      ]);
      const text = logs.text();
      for (const secret of [webhook.secret, rotated.secret, url]) expect(text).not.toContain(secret);
    });
  });

  describe('the document', () => {
    it('GET /admin/v1/openapi.json serves the OpenAPI 3.1 document of every operation', async () => {
      const answer = await admin.request('GET', '/admin/v1/openapi.json');
      expect(answer.status).toBe(200);
      expect(answer.json).toEqual(admin.document);
      expect(answer.json.openapi).toBe('3.1.0');
      expect(
        Object.fromEntries(Object.entries(answer.json.paths).map(([path, operations]) => [path, Object.keys(operations as object)])),
      ).toEqual({
        '/admin/v1/users': ['post', 'get'],
        '/admin/v1/users/{id}': ['get', 'patch', 'delete'],
        '/admin/v1/users/{id}/keys': ['post', 'get'],
        '/admin/v1/keys/{keyId}/rotate': ['post'],
        '/admin/v1/keys/{keyId}': ['delete'],
        '/admin/v1/users/{id}/contacts/import': ['post'],
        '/admin/v1/users/{id}/contacts/{contactId}/merge': ['post'],
        '/admin/v1/users/{id}/contacts/{contactId}': ['delete'],
        '/admin/v1/users/{id}/webhooks': ['post', 'get'],
        '/admin/v1/webhooks/{webhookId}': ['get', 'patch', 'delete'],
        '/admin/v1/webhooks/{webhookId}/rotate-secret': ['post'],
        '/admin/v1/webhooks/{webhookId}/deliveries': ['get'],
        '/admin/v1/webhooks/{webhookId}/replay': ['post'],
        '/admin/v1/openapi.json': ['get'],
      });
    });
  });
});
