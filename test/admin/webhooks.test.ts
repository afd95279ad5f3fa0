import { randomUUID } from 'node:crypto';
import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WEBHOOK_EVENT_TYPES } from '../../src/domain/webhooks.js';
import type { WebhookDelivery } from '../../src/store/store.js';
import { startAdminApp, type AdminTestServer } from '../support/admin-app.js';
import { describeEachBackend } from '../support/backends.js';
import { createUser, importNumberedContacts } from '../support/seed.js';

const URL = 'https://hooks.example.com/contacts';
const WEBHOOK_FIELDS = ['created_at', 'description', 'disabled_reason', 'events', 'id', 'lag', 'status', 'updated_at', 'url'];

/** The webhook endpoints of the admin API, over a real socket, every answer checked against the admin document. */
describeEachBackend('admin API: webhooks', (db) => {
  let admin: AdminTestServer;

  beforeAll(async () => {
    admin = await startAdminApp(db().store);
  });
  afterAll(async () => {
    await admin?.close();
  });

  const makeWebhook = (userId: string, body: Record<string, unknown> = { url: URL }, headers: Record<string, string> = {}) =>
    admin.request('POST', `/admin/v1/users/${userId}/webhooks`, { body, headers });
  const made = async (body: Record<string, unknown> = { url: URL }) => {
    const user = await createUser(db().store);
    const answer = await makeWebhook(user.id, body);
    expect(answer.status).toBe(201);
    return { user, webhook: answer.json };
  };
  const shown = async (webhookId: string) => admin.request('GET', `/admin/v1/webhooks/${webhookId}`);
  const errorOf = async (answer: Promise<{ status: number; json: any }>) => {
    const { status, json } = await answer;
    return [status, json];
  };

  describe('POST /users/{id}/webhooks', () => {
    it('201 with the endpoint, enabled, every event type, no lag, and its secret: a Standard Webhooks secret, stored sealed', async () => {
      const user = await createUser(db().store);
      const created = await makeWebhook(user.id, { url: URL, description: '  CRM sync ' });
      expect(created.status).toBe(201);
      const { secret, ...webhook } = created.json;
      expect(webhook).toEqual({
        id: expect.any(String),
        url: URL,
        events: [...WEBHOOK_EVENT_TYPES],
        description: 'CRM sync',
        status: 'enabled',
        disabled_reason: null,
        lag: { events: 0, seconds: 0 },
        created_at: expect.any(String),
        updated_at: expect.any(String),
      });
      expect(secret).toMatch(/^whsec_[A-Za-z0-9+/]+=*$/);
      // A receiver's library takes it and verifies what it signs.
      const signed = new Webhook(secret).sign('msg_1', new Date(), '{}');
      expect(
        new Webhook(secret).verify('{}', {
          'webhook-id': 'msg_1',
          'webhook-timestamp': String(Math.floor(Date.now() / 1000)),
          'webhook-signature': signed,
        }),
      ).toEqual({});
      const stored = await db().store.webhooks.get(webhook.id);
      expect(stored?.ownerId).toBe(user.id);
      expect(JSON.stringify(stored)).not.toContain(secret.slice('whsec_'.length));
    });

    it('takes a subset of the event types (kept in their usual order); starts at the end of the log: no earlier change waits', async () => {
      const user = await createUser(db().store);
      await importNumberedContacts(db().store, user.id, 3, 'Before');
      const created = await makeWebhook(user.id, { url: URL, events: ['contact.deleted', 'contact.merged'], description: null });
      expect(created.json).toMatchObject({
        events: ['contact.merged', 'contact.deleted'],
        description: null,
        lag: { events: 0, seconds: 0 },
      });
    });

    it('with `since`, starts at that time: the changes made since then wait to be delivered', async () => {
      const user = await createUser(db().store);
      const since = new Date(Date.now() - 1000).toISOString();
      await importNumberedContacts(db().store, user.id, 3, 'Since');
      const created = await makeWebhook(user.id, { url: URL, since });
      expect(created.json.lag.events).toBe(3);
      expect(created.json.lag.seconds).toBeGreaterThanOrEqual(0);
    });

    it('an Idempotency-Key gives the same endpoint and secret again, never a second endpoint', async () => {
      const user = await createUser(db().store);
      const headers = { 'idempotency-key': randomUUID() };
      const first = await makeWebhook(user.id, { url: URL }, headers);
      const again = await makeWebhook(user.id, { url: URL }, headers);
      expect([again.status, again.json, again.headers.get('idempotent-replayed')]).toEqual([201, first.json, 'true']);
      expect((await db().store.webhooks.listByOwner(user.id)).map((webhook) => webhook.id)).toEqual([first.json.id]);
    });

    it('400 naming the field: a URL not https or on a private address, an unknown or repeated event, a time out of retention', async () => {
      const user = await createUser(db().store);
      for (const [body, error] of [
        [{ url: 'http://hooks.example.com/contacts' }, 'url must use https; got "http"'],
        [
          { url: 'https://10.0.0.7/hook' },
          'url must not name a loopback, private, link-local, shared or other non-public address; got "10.0.0.7"',
        ],
        [{ url: 'https://127.0.0.1:8443/hook' }, expect.stringMatching(/^url /)],
        [{ url: 'https://[::ffff:169.254.169.254]/latest' }, expect.stringMatching(/^url /)],
        [{ url: 'not a url' }, expect.stringMatching(/^url /)],
        [{ url: 'https://user:pass@hooks.example.com/' }, expect.stringMatching(/^url /)],
        [{}, 'url is required'],
        [{ url: URL, events: ['contact.created'] }, 'events.0 must be one of: contact.upserted, contact.merged, contact.deleted'],
        [
          { url: URL, events: ['contact.deleted', 'contact.deleted'] },
          'events must NOT have duplicate items (items ## 1 and 0 are identical)',
        ],
        [{ url: URL, events: [] }, 'events must NOT have fewer than 1 items'],
        [
          { url: URL, since: '2020-01-01T00:00:00Z' },
          'since must be within the change log\'s retention (30 days); got "2020-01-01T00:00:00Z": resync with the contact listing instead',
        ],
        [{ url: URL, since: '2999-01-01T00:00:00Z' }, 'since must not be in the future; got "2999-01-01T00:00:00Z"'],
        [{ url: URL, since: 'yesterday' }, 'since must be a date and time in RFC 3339 form, like 2026-05-01T09:30:00Z'],
        [{ url: URL, secret: 'whsec_mine' }, 'unknown field "secret"'],
      ] as const) {
        const answer = await makeWebhook(user.id, body);
        expect({ body, status: answer.status, error: answer.json.error }).toEqual({ body, status: 400, error });
      }
      expect(await db().store.webhooks.listByOwner(user.id)).toEqual([]);
    });

    it('400 for an IPv6 literal in any special range, IPv4 embedded in it or not (src/domain/public-address.ts)', async () => {
      const user = await createUser(db().store);
      for (const url of [
        'https://[::127.0.0.1]/hook', // IPv4-compatible
        'https://[::8.8.8.8]/hook',
        'https://[::ffff:0:127.0.0.1]/hook', // IPv4-translated
        'https://[64:ff9b::10.0.0.1]/hook', // NAT64 of a private address
        'https://[64:ff9b:1::a00:1]/hook', // NAT64 local use
        'https://[2002:7f00:1::1]/hook', // 6to4
        'https://[2001:0:4136:e378:8000:63bf:3fff:fdd2]/hook', // Teredo
        'https://[fec0::1]/hook',
        'https://[fd00::1]/hook',
        'https://[fe80::1]/hook',
        'https://[ff02::1]/hook',
        'https://[100::1]/hook',
        'https://[2001:db8::1]/hook',
        'https://[::]/hook',
        'https://[::1]/hook',
      ]) {
        const answer = await makeWebhook(user.id, { url });
        expect({ url, status: answer.status, error: answer.json.error }).toEqual({
          url,
          status: 400,
          error: `url must not name a loopback, private, link-local, shared or other non-public address; got ${JSON.stringify(new globalThis.URL(url).hostname)}`,
        });
      }
      expect(await db().store.webhooks.listByOwner(user.id)).toEqual([]);
    });

    it('with WEBHOOKS_ALLOW_PRIVATE_URLS, plain http and private addresses are taken (tests, private deployments)', async () => {
      const permissive = await startAdminApp(db().store, { config: { webhooks: { allowPrivateUrls: true } } });
      try {
        const user = await createUser(db().store);
        for (const url of ['http://127.0.0.1:8080/hook', 'https://10.0.0.7/hook']) {
          const answer = await permissive.request('POST', `/admin/v1/users/${user.id}/webhooks`, { body: { url } });
          expect([answer.status, answer.json.url]).toEqual([201, url]);
        }
      } finally {
        await permissive.close();
      }
    });

    it('404 for an unknown user, or a malformed id', async () => {
      for (const id of [randomUUID(), 'someone']) {
        expect(await errorOf(makeWebhook(id))).toEqual([404, { error: `No user with id "${id}"` }]);
      }
    });
  });

  describe('GET /users/{id}/webhooks and GET /webhooks/{webhookId}', () => {
    it('every endpoint of the user, oldest first, with status and lag; never a secret', async () => {
      const user = await createUser(db().store);
      const first = (await makeWebhook(user.id, { url: `${URL}/1` })).json;
      const second = (await makeWebhook(user.id, { url: `${URL}/2`, events: ['contact.deleted'] })).json;
      const listed = await admin.request('GET', `/admin/v1/users/${user.id}/webhooks`);
      expect(listed.status).toBe(200);
      expect(listed.json.data.map((webhook: any) => [webhook.id, webhook.url])).toEqual([
        [first.id, `${URL}/1`],
        [second.id, `${URL}/2`],
      ]);
      for (const webhook of listed.json.data) expect(Object.keys(webhook).sort()).toEqual(WEBHOOK_FIELDS);
      const one = await shown(first.id);
      expect([one.status, Object.keys(one.json).sort()]).toEqual([200, WEBHOOK_FIELDS]);
      const { secret, ...view } = first;
      expect(one.json).toEqual({ ...view, updated_at: expect.any(String) });
      for (const text of [listed.text, one.text]) {
        expect(text).not.toContain('whsec_');
        expect(text).not.toContain(secret.slice('whsec_'.length));
        expect(text).not.toContain(second.secret.slice('whsec_'.length));
      }
    });

    it('lag counts the changes after the cursor, and how long the oldest has waited', async () => {
      const { user, webhook } = await made();
      await importNumberedContacts(db().store, user.id, 4, 'Lag');
      expect((await shown(webhook.id)).json.lag.events).toBe(4);
      // Seconds since the oldest of them changed, whole ones.
      await new Promise((resolve) => setTimeout(resolve, 1_100));
      const { lag } = (await shown(webhook.id)).json;
      expect(lag.events).toBe(4);
      expect(lag.seconds).toBeGreaterThanOrEqual(1);
    });

    it('an empty list for a user without endpoints; 404 for an unknown user, an unknown or malformed endpoint id', async () => {
      const user = await createUser(db().store);
      expect(await errorOf(admin.request('GET', `/admin/v1/users/${user.id}/webhooks`))).toEqual([200, { data: [] }]);
      const unknown = randomUUID();
      expect(await errorOf(admin.request('GET', `/admin/v1/users/${unknown}/webhooks`))).toEqual([
        404,
        { error: `No user with id "${unknown}"` },
      ]);
      for (const id of [unknown, 'hook-1']) expect(await errorOf(shown(id))).toEqual([404, { error: `No webhook with id "${id}"` }]);
    });
  });

  describe('PATCH /webhooks/{webhookId}', () => {
    it('changes the fields given; disabling gives a reason, enabling clears it', async () => {
      const { webhook } = await made();
      const changed = await admin.request('PATCH', `/admin/v1/webhooks/${webhook.id}`, {
        body: { url: `${URL}/v2`, events: ['contact.upserted'], description: 'v2' },
      });
      expect([changed.status, changed.json]).toEqual([
        200,
        {
          ...webhook,
          secret: undefined,
          url: `${URL}/v2`,
          events: ['contact.upserted'],
          description: 'v2',
          updated_at: expect.any(String),
        },
      ]);
      const disabled = (await admin.request('PATCH', `/admin/v1/webhooks/${webhook.id}`, { body: { status: 'disabled' } })).json;
      expect(disabled).toMatchObject({ status: 'disabled', disabled_reason: 'disabled by an administrator', url: `${URL}/v2` });
      const enabled = (await admin.request('PATCH', `/admin/v1/webhooks/${webhook.id}`, { body: { status: 'enabled' } })).json;
      expect(enabled).toMatchObject({ status: 'enabled', disabled_reason: null });
      expect((await shown(webhook.id)).json).toEqual(enabled);
    });

    it('400 naming the field: a private URL, an unknown status or field; 404 for an unknown endpoint', async () => {
      const { webhook } = await made();
      for (const [body, error] of [
        [{ url: 'https://192.168.1.10/hook' }, expect.stringMatching(/^url /)],
        [{ status: 'paused' }, 'status must be one of: enabled, disabled'],
        [{ events: [] }, 'events must NOT have fewer than 1 items'],
        [{ secret: 'whsec_x' }, 'unknown field "secret"'],
      ] as const) {
        const answer = await admin.request('PATCH', `/admin/v1/webhooks/${webhook.id}`, { body });
        expect({ body, status: answer.status, error: answer.json.error }).toEqual({ body, status: 400, error });
      }
      expect((await shown(webhook.id)).json.url).toBe(URL);
      for (const id of [randomUUID(), 'hook-1']) {
        const answer = admin.request('PATCH', `/admin/v1/webhooks/${id}`, { body: { status: 'disabled' } });
        expect(await errorOf(answer)).toEqual([404, { error: `No webhook with id "${id}"` }]);
      }
    });
  });

  describe('DELETE /webhooks/{webhookId}', () => {
    it('204, then the endpoint is gone: 404 to read or delete it again', async () => {
      const { webhook } = await made();
      const deleted = await admin.request('DELETE', `/admin/v1/webhooks/${webhook.id}`);
      expect([deleted.status, deleted.text]).toEqual([204, '']);
      expect((await shown(webhook.id)).status).toBe(404);
      expect(await errorOf(admin.request('DELETE', `/admin/v1/webhooks/${webhook.id}`))).toEqual([
        404,
        { error: `No webhook with id "${webhook.id}"` },
      ]);
    });

    it('deleting the user deletes the user’s endpoints', async () => {
      const { user, webhook } = await made();
      expect((await admin.request('DELETE', `/admin/v1/users/${user.id}`)).status).toBe(204);
      expect((await shown(webhook.id)).status).toBe(404);
      expect(await db().store.webhooks.get(webhook.id)).toBeNull();
    });
  });

  describe('POST /webhooks/{webhookId}/rotate-secret', () => {
    it('200 with a new secret, shown this once; the previous one is kept to sign for 24 hours', async () => {
      const { webhook } = await made();
      const before = Date.now();
      const rotated = await admin.request('POST', `/admin/v1/webhooks/${webhook.id}/rotate-secret`);
      expect(rotated.status).toBe(200);
      expect(Object.keys(rotated.json)).toEqual(['secret']);
      expect(rotated.json.secret).toMatch(/^whsec_/);
      expect(rotated.json.secret).not.toBe(webhook.secret);
      const stored = await db().store.webhooks.get(webhook.id);
      expect(stored?.sealedPreviousSecret).not.toBeNull();
      expect(Date.parse(stored!.previousSecretUntil!)).toBeGreaterThanOrEqual(before + 24 * 3_600_000);
      const text = (await shown(webhook.id)).text;
      expect(text).not.toContain(rotated.json.secret.slice('whsec_'.length));
      expect(text).not.toContain('whsec_');
    });

    it('an Idempotency-Key gives the same secret again, rotating once; 404 for an unknown endpoint', async () => {
      const { webhook } = await made();
      const headers = { 'idempotency-key': randomUUID() };
      const first = await admin.request('POST', `/admin/v1/webhooks/${webhook.id}/rotate-secret`, { headers });
      const sealed = (await db().store.webhooks.get(webhook.id))?.sealedSecret;
      const again = await admin.request('POST', `/admin/v1/webhooks/${webhook.id}/rotate-secret`, { headers });
      expect([again.status, again.json, again.headers.get('idempotent-replayed')]).toEqual([200, first.json, 'true']);
      expect((await db().store.webhooks.get(webhook.id))?.sealedSecret).toBe(sealed);
      const unknown = randomUUID();
      const missing = admin.request('POST', `/admin/v1/webhooks/${unknown}/rotate-secret`, { body: {} });
      expect(await errorOf(missing)).toEqual([404, { error: `No webhook with id "${unknown}"` }]);
    });
  });

  describe('GET /webhooks/{webhookId}/deliveries', () => {
    it('the attempts, latest first, each with its event, attempt, status, error and duration; `limit` bounds them', async () => {
      const { webhook } = await made();
      const start = Date.now() - 60_000;
      const at = (seconds: number) => new Date(start + seconds * 1000).toISOString();
      const attempt = (eventId: string, attempt: number, statusCode: number | null, seconds: number): WebhookDelivery => ({
        webhookId: webhook.id,
        eventId,
        type: 'contact.upserted',
        attempt,
        statusCode,
        error: statusCode === 200 ? null : statusCode === null ? 'timeout after 15000 ms' : `HTTP ${statusCode}`,
        durationMs: 12 + attempt,
        attemptedAt: at(seconds),
      });
      await db().store.webhooks.recordDeliveries([attempt('msg_a', 1, 500, 1), attempt('msg_a', 2, null, 2), attempt('msg_a', 3, 200, 3)]);
      const listed = await admin.request('GET', `/admin/v1/webhooks/${webhook.id}/deliveries`);
      expect([listed.status, listed.json]).toEqual([
        200,
        {
          data: [3, 2, 1].map((n) => ({
            event_id: 'msg_a',
            type: 'contact.upserted',
            attempt: n,
            status_code: [500, null, 200][n - 1],
            error: ['HTTP 500', 'timeout after 15000 ms', null][n - 1],
            duration_ms: 12 + n,
            attempted_at: at(n),
          })),
        },
      ]);
      const limited = await admin.request('GET', `/admin/v1/webhooks/${webhook.id}/deliveries?limit=2`);
      expect(limited.json.data.map((delivery: any) => delivery.attempt)).toEqual([3, 2]);
      const other = await made();
      expect((await admin.request('GET', `/admin/v1/webhooks/${other.webhook.id}/deliveries`)).json).toEqual({ data: [] });
    });

    it('400 naming limit out of range or not a number; 404 for an unknown endpoint', async () => {
      const { webhook } = await made();
      for (const limit of ['0', '101', 'ten', '-1', '']) {
        const answer = await admin.request('GET', `/admin/v1/webhooks/${webhook.id}/deliveries?limit=${limit}`);
        expect({ limit, status: answer.status, error: answer.json.error }).toEqual({
          limit,
          status: 400,
          error: expect.stringMatching(/^limit /),
        });
      }
      const unknown = randomUUID();
      const missing = admin.request('GET', `/admin/v1/webhooks/${unknown}/deliveries`);
      expect(await errorOf(missing)).toEqual([404, { error: `No webhook with id "${unknown}"` }]);
    });
  });

  describe('POST /webhooks/{webhookId}/replay', () => {
    it('202: the cursor moves back to `since`, and the changes since then wait to be delivered again', async () => {
      const user = await createUser(db().store);
      const since = new Date(Date.now() - 1000).toISOString();
      await importNumberedContacts(db().store, user.id, 5, 'Replay');
      const webhook = (await makeWebhook(user.id)).json;
      expect(webhook.lag.events).toBe(0);
      const replayed = await admin.request('POST', `/admin/v1/webhooks/${webhook.id}/replay`, { body: { since } });
      expect(replayed.status).toBe(202);
      expect(replayed.json).toMatchObject({ id: webhook.id, status: 'enabled', lag: { events: 5 } });
      expect((await shown(webhook.id)).json.lag.events).toBe(5);
    });

    it('409 for a disabled endpoint; 400 naming since out of retention or missing; 404 for an unknown endpoint', async () => {
      const { webhook } = await made();
      const replay = (id: string, body: unknown) => admin.request('POST', `/admin/v1/webhooks/${id}/replay`, { body });
      for (const [body, error] of [
        [{ since: '2020-01-01T00:00:00Z' }, expect.stringMatching(/^since /)],
        [{}, 'since is required'],
        [{ since: 42 }, 'since must be a string'],
      ] as const) {
        const answer = await replay(webhook.id, body);
        expect({ body, status: answer.status, error: answer.json.error }).toEqual({ body, status: 400, error });
      }
      await admin.request('PATCH', `/admin/v1/webhooks/${webhook.id}`, { body: { status: 'disabled' } });
      const refused = await replay(webhook.id, { since: new Date().toISOString() });
      expect([refused.status, refused.json.error]).toEqual([
        409,
        `Webhook ${webhook.id} is disabled: enable it (status "enabled"), then replay`,
      ]);
      const unknown = randomUUID();
      expect(await errorOf(replay(unknown, { since: new Date().toISOString() }))).toEqual([
        404,
        { error: `No webhook with id "${unknown}"` },
      ]);
    });
  });
});
