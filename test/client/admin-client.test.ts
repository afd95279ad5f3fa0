import { randomUUID } from 'node:crypto';
import { openAsBlob } from 'node:fs';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  AuthenticationError,
  BadRequestError,
  ConflictError,
  ContactsAdminClient,
  ContactsClient,
  IdempotencyKeyReusedError,
  NotFoundError,
  type ContactsAdminClientOptions,
} from 'contacts-read-api-client';
import { startAdminApp, TEST_ADMIN_TOKEN, type AdminTestServer } from '../support/admin-app.js';
import { buildTestApp } from '../support/app.js';
import { describeEachBackend } from '../support/backends.js';
import { cliJson } from '../support/cli.js';
import { openApiResponseChecker } from '../support/openapi-responses.js';

let sequence = 0;
const newEmail = () => `admin-client-${++sequence}-${Date.now()}@example.com`;

/** ContactsAdminClient against a real admin server, every answer it gets checked against the served admin document. */
describeEachBackend('ContactsAdminClient against the admin API', (db) => {
  let server: AdminTestServer;
  let publicApp: FastifyInstance;
  let publicUrl: string;
  /** How many requests reached the server through the clients made by `clientWith`. */
  let requests = 0;

  beforeAll(async () => {
    server = await startAdminApp(db().store);
    publicApp = await buildTestApp(db().store);
    publicUrl = await publicApp.listen({ host: '127.0.0.1', port: 0 });
  });
  afterAll(async () => {
    await server?.close();
    await publicApp?.close();
  });

  /** A fetch that checks each answer against the admin document before the client reads it. */
  const checkedFetch: typeof fetch = async (input, init) => {
    requests++;
    const response = await fetch(input, init);
    const body = Buffer.from(await response.arrayBuffer());
    const url = new URL(input instanceof Request ? input.url : input);
    const exchange = {
      method: init?.method ?? 'GET',
      url: url.pathname + url.search,
      status: response.status,
      headers: Object.fromEntries(response.headers),
      body,
    };
    const problems = openApiResponseChecker(server.document)(exchange);
    if (problems.length > 0) throw new Error(`The answer disagrees with the admin OpenAPI document:\n${problems.join('\n')}`);
    return new Response(response.status === 204 ? null : body, {
      status: response.status,
      statusText: response.statusText,
      headers: response.headers,
    });
  };
  const clientWith = (options: Partial<ContactsAdminClientOptions> = {}) =>
    new ContactsAdminClient({ baseUrl: server.url, adminToken: TEST_ADMIN_TOKEN, fetch: checkedFetch, ...options });
  const publicStatus = async (apiKey: string) =>
    new ContactsClient({ baseUrl: publicUrl, apiKey, maxRetries: 0 }).listContacts().then(
      () => 200,
      (error: { status: number }) => error.status,
    );

  it('does a settings page’s whole life: create the user, upgrade, make a key, list, rotate, revoke, downgrade', async () => {
    const admin = clientWith();
    const id = randomUUID();
    const email = newEmail();

    const user = await admin.createUser({ id, email, name: 'Ada Lovelace', plan: 'free' });
    expect(user).toEqual({ id, email, name: 'Ada Lovelace', plan: 'free', created_at: expect.any(String) });
    expect(await admin.getUser(id)).toEqual(user);
    expect(await admin.findUserByEmail(email.toUpperCase())).toEqual(user);
    expect(await admin.findUserByEmail(newEmail())).toBeNull();

    expect(await admin.updateUser(id, { plan: 'pro' })).toEqual({ ...user, plan: 'pro' });
    const created = await admin.createKey(id, { label: 'Zapier' });
    expect(created).toMatchObject({ label: 'Zapier', scopes: ['contacts:read'], expires_at: null });
    expect(await publicStatus(created.key)).toBe(200);

    const listed = await admin.listKeys(id);
    expect(listed).toEqual([expect.objectContaining({ id: created.id, start: created.start, label: 'Zapier', status: 'active' })]);
    expect(JSON.stringify(listed)).not.toContain(created.key);

    const rotated = await admin.rotateKey(created.id, { overlapSeconds: 3600 });
    expect(rotated).toMatchObject({ replaces: created.id, label: 'Zapier' });
    expect([await publicStatus(created.key), await publicStatus(rotated.key)]).toEqual([200, 200]);
    await admin.revokeKey(created.id);
    expect(await publicStatus(created.key)).toBe(401);
    expect((await admin.listKeys(id)).map((key) => [key.id, key.status])).toEqual([
      [created.id, 'revoked'],
      [rotated.id, 'active'],
    ]);

    await admin.updateUser(id, { plan: 'free' });
    expect(await publicStatus(rotated.key)).toBe(403);
    await admin.deleteUser(id);
    await expect(admin.getUser(id)).rejects.toBeInstanceOf(NotFoundError);
  });

  it('imports a file as a Blob, with the summary `contacts import --json` prints, then merges and deletes contacts', async () => {
    const admin = clientWith();
    const [overHttp, byCli] = [
      await admin.createUser({ email: newEmail(), plan: 'pro' }),
      await admin.createUser({ email: newEmail(), plan: 'pro' }),
    ];
    const path = 'test/fixtures/import/google-contacts.csv';

    const summary = await admin.importContacts(overHttp.id, await openAsBlob(path), { contentType: 'text/csv' });
    expect(summary).toEqual(await cliJson(db().databaseUrl, 'contacts', 'import', '--user', byCli.id, path));

    const ndjson = '{"name": "Merge me", "email": "dup@example.com"}\n{"name": "Keep me", "email": "keep@example.com"}\n';
    expect(
      await admin.importContacts(overHttp.id, new TextEncoder().encode(ndjson), { contentType: 'application/x-ndjson' }),
    ).toMatchObject({ created: 2 });
    const again = await admin.importContacts(overHttp.id, '{"name": "Keep me too", "email": "KEEP@example.com"}\n', {
      contentType: 'application/x-ndjson',
      matchEmail: true,
    });
    expect(again).toMatchObject({ created: 0, updated: 1, matched_by_email: 1 });

    const page = await db().store.contacts.listPage(overHttp.id, { limit: 100, offset: 0 });
    const idOf = (name: string) => page.contacts.find((contact) => contact.name === name)!.id;
    const [duplicate, survivor] = [idOf('Merge me'), idOf('Keep me too')];
    expect(await admin.mergeContact(overHttp.id, duplicate, survivor)).toEqual({ merged: duplicate, into: survivor });
    await admin.deleteContact(overHttp.id, survivor);
    expect(await db().store.contacts.get(overHttp.id, duplicate)).toBeNull();
    await expect(admin.deleteContact(overHttp.id, survivor)).rejects.toBeInstanceOf(NotFoundError);
  });

  it('manages a user’s webhook endpoint: create (secret once), list, read, change, rotate, deliveries, replay, delete', async () => {
    const admin = clientWith();
    const user = await admin.createUser({ email: newEmail(), plan: 'pro' });
    const url = 'https://hooks.example.com/contacts';
    const created = await admin.createWebhook(user.id, { url, events: ['contact.upserted'] }, { idempotencyKey: randomUUID() });
    expect(created).toMatchObject({ url, events: ['contact.upserted'], status: 'enabled', lag: { events: 0, seconds: 0 } });
    expect(created.secret).toMatch(/^whsec_/);
    const { secret: _secret, ...webhook } = created;
    expect(await admin.listWebhooks(user.id)).toEqual([webhook]);
    expect(await admin.getWebhook(created.id)).toEqual(webhook);

    const disabled = await admin.updateWebhook(created.id, { status: 'disabled', description: 'paused' });
    expect(disabled).toMatchObject({ status: 'disabled', description: 'paused', disabled_reason: expect.any(String) });
    await expect(admin.replayWebhook(created.id, new Date())).rejects.toBeInstanceOf(ConflictError);
    expect(await admin.updateWebhook(created.id, { status: 'enabled' })).toMatchObject({ status: 'enabled', disabled_reason: null });
    expect(await admin.replayWebhook(created.id, new Date(Date.now() - 60_000))).toMatchObject({ id: created.id, status: 'enabled' });

    const rotated = await admin.rotateWebhookSecret(created.id);
    expect(rotated.secret).toMatch(/^whsec_/);
    expect(rotated.secret).not.toBe(created.secret);

    await db().store.webhooks.recordDeliveries(
      [1, 2, 3].map((attempt) => ({
        webhookId: created.id,
        eventId: 'msg_client',
        type: 'contact.upserted' as const,
        attempt,
        statusCode: attempt === 3 ? 200 : 503,
        error: attempt === 3 ? null : 'HTTP 503',
        durationMs: 5,
        attemptedAt: new Date(Date.now() - 10_000 + attempt * 1000).toISOString(),
      })),
    );
    expect((await admin.listWebhookDeliveries(created.id, { limit: 2 })).map((delivery) => delivery.attempt)).toEqual([3, 2]);
    expect(await admin.listWebhookDeliveries(created.id)).toHaveLength(3);
    await expect(admin.createWebhook(user.id, { url: 'https://10.0.0.7/hook' })).rejects.toBeInstanceOf(BadRequestError);

    await admin.deleteWebhook(created.id);
    await expect(admin.getWebhook(created.id)).rejects.toBeInstanceOf(NotFoundError);
    expect(await admin.listWebhooks(user.id)).toEqual([]);
  });

  it('an Idempotency-Key gives the first answer again (the same key, never a second one); with another body, IdempotencyKeyReusedError', async () => {
    const admin = clientWith();
    const user = await admin.createUser({ email: newEmail(), plan: 'pro' });
    const idempotencyKey = randomUUID();
    const first = await admin.createKey(user.id, { label: 'once' }, { idempotencyKey });
    expect(await admin.createKey(user.id, { label: 'once' }, { idempotencyKey })).toEqual(first);
    expect(await admin.listKeys(user.id)).toHaveLength(1);
    await expect(admin.createKey(user.id, { label: 'twice' }, { idempotencyKey })).rejects.toBeInstanceOf(IdempotencyKeyReusedError);
  });

  it('retries a POST whose answer was lost with the same Idempotency-Key, so it is done once', async () => {
    let lost = 0;
    const losingFetch: typeof fetch = async (input, init) => {
      const response = await checkedFetch(input, init);
      // The server did the work; the answer never arrives, once.
      if (lost++ === 0) throw new TypeError('fetch failed', { cause: new Error('socket hang up') });
      return response;
    };
    const admin = clientWith({ fetch: losingFetch, sleep: async () => undefined });
    const before = requests;
    const user = await admin.createUser({ email: newEmail(), plan: 'pro' });
    expect(requests - before).toBe(2);
    expect(await clientWith().getUser(user.id)).toEqual(user);
  });

  it('throws the error class of each refusal, carrying the server’s message', async () => {
    const admin = clientWith();
    const user = await admin.createUser({ email: newEmail(), plan: 'free' });
    const refusal = (call: Promise<unknown>) =>
      call.then(
        () => undefined,
        (error: unknown) => error,
      );

    expect(await refusal(admin.createUser({ email: user.email, plan: 'pro' }))).toEqual(
      expect.objectContaining({ constructor: ConflictError, status: 409, serverMessage: `A user with email ${user.email} already exists` }),
    );
    expect(await refusal(admin.getUser(randomUUID()))).toBeInstanceOf(NotFoundError);
    expect(await refusal(admin.updateUser(user.id, { plan: 'gold' as 'pro' }))).toEqual(
      expect.objectContaining({ constructor: BadRequestError, status: 400, serverMessage: 'plan must be one of: free, pro' }),
    );
    expect(await refusal(admin.importContacts(user.id, '{"email": 42}\n', { contentType: 'application/x-ndjson' }))).toEqual(
      expect.objectContaining({ constructor: BadRequestError, serverMessage: 'line 1: field "email" must be a string or null' }),
    );
    expect(await refusal(admin.importContacts(user.id, 'x', { contentType: 'text/plain' as 'text/csv' }))).toEqual(
      expect.objectContaining({ constructor: BadRequestError, status: 415 }),
    );
    expect(await refusal(clientWith({ adminToken: 'x'.repeat(40) }).getUser(user.id))).toBeInstanceOf(AuthenticationError);
  });
});

describe('ContactsAdminClient options', () => {
  it('refuses a base URL that is not http(s) and a missing token, naming the option', () => {
    expect(() => new ContactsAdminClient({ baseUrl: 'ftp://x', adminToken: 't' })).toThrow(/^ContactsAdminClient: baseUrl must be/);
    expect(() => new ContactsAdminClient({ baseUrl: 'http://x', adminToken: ' ' })).toThrow(
      'ContactsAdminClient: adminToken is required (the server’s ADMIN_TOKEN)',
    );
  });
});
