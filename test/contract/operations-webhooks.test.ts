import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ConflictError, InputError, NotFoundError } from '../../src/domain/errors.js';
import { WEBHOOK_EVENT_TYPES } from '../../src/domain/webhooks.js';
import { openWebhookSecret } from '../../src/operations/webhook-secrets.js';
import {
  createWebhook,
  deleteWebhook,
  DISABLED_BY_ADMIN,
  getWebhook,
  listWebhookDeliveries,
  listWebhooks,
  PREVIOUS_SECRET_VALIDITY_MS,
  replayWebhook,
  rotateWebhookSecret,
  updateWebhook,
  webhookDeliveryView,
  webhookLag,
  webhookView,
  type NewWebhookRequest,
  type WebhookPolicy,
} from '../../src/operations/webhooks.js';
import type { Store, User } from '../../src/store/store.js';
import { describeEachBackend } from '../support/backends.js';
import { openOtherConnection, type OtherConnection } from '../support/other-connection.js';
import { contactRecord, createUser } from '../support/seed.js';
import { rejection } from '../support/thrown.js';

const HOUR = 3_600_000;
const POLICY: WebhookPolicy = { allowPrivate: false, retentionMs: 7 * 24 * HOUR };
const URL = 'https://hooks.example.com/contacts';

describeEachBackend('Operations: webhooks', (db) => {
  let store: Store;
  let other: OtherConnection;

  const create = (request: Partial<NewWebhookRequest> & { user: NewWebhookRequest['user'] }, policy = POLICY) =>
    createWebhook(store, { url: URL, ...request }, policy);
  const importContacts = async (owner: User, count: number) => {
    const ids = Array.from({ length: count }, () => randomUUID());
    await store.contacts.importContacts(
      owner.id,
      ids.map((id) => contactRecord({ name: id }, id)),
    );
    return ids;
  };
  /** The contacts whose changes an endpoint would deliver next. */
  const pending = async (id: string) => {
    const record = await getWebhook(store, id);
    return (await store.contacts.readChanges(record.ownerId, record.cursor, 100)).records.map((change) => change.contactId).sort();
  };
  /** A moment between two writes: the log's times on both sides of it differ. */
  const moment = async () => {
    await sleep(20);
    const time = new Date().toISOString();
    await sleep(20);
    return time;
  };

  beforeAll(async () => {
    store = db().store;
    other = await openOtherConnection(db());
  });
  afterAll(async () => {
    await other.close();
  });

  describe('createWebhook', () => {
    it('gives a whsec_ secret once, keeps it sealed to the endpoint, and starts at the end of the log', async () => {
      const owner = await createUser(store);
      await importContacts(owner, 2);
      const { record, secret } = await create({ user: owner.email, description: '  CRM  ' });
      expect(secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
      expect(record.sealedSecret).not.toContain(secret.slice(6));
      expect(await openWebhookSecret(store.oauth, record.id, record.sealedSecret)).toBe(secret);
      expect(record).toMatchObject({
        ownerId: owner.id,
        url: URL,
        events: [...WEBHOOK_EVENT_TYPES],
        description: 'CRM',
        status: 'enabled',
        cursor: { seq: (await store.contacts.changeLog(owner.id)).currentSeq, after: null },
      });
      expect(await pending(record.id)).toEqual([]);
      const later = await importContacts(owner, 1);
      expect(await pending(record.id)).toEqual(later);
    });

    it('with since, starts before the first change at or after it', async () => {
      const owner = await createUser(store);
      await importContacts(owner, 2);
      const since = await moment();
      const after = await importContacts(owner, 3);
      const { record } = await create({ user: { id: owner.id }, since, events: ['contact.deleted', 'contact.upserted'] });
      expect(record.events).toEqual(['contact.upserted', 'contact.deleted']);
      expect(record.pendingSince).toBe(since);
      expect(await pending(record.id)).toEqual(after.sort());
    });

    it('refuses with InputError what it cannot deliver to, and a since it cannot reach', async () => {
      const owner = await createUser(store);
      const refused = async (request: Partial<NewWebhookRequest>, message: RegExp, policy = POLICY) =>
        expect((await rejection(create({ user: owner.id, ...request }, policy), InputError)).message).toMatch(message);
      await refused({ url: 'http://hooks.example.com/' }, /^url must use https/);
      await refused({ url: 'https://169.254.169.254/latest' }, /non-public address; got "169.254.169.254"/);
      await refused({ url: 'https://localhost:8443/' }, /localhost/);
      await refused({ events: [] }, /^events must name at least one/);
      await refused({ events: ['contact.created'] }, /^events must name only .*; got "contact.created"/);
      await refused({ description: 'x'.repeat(501) }, /^description must be at most 500/);
      await refused({ since: '2026' }, /^since must be an ISO 8601 date-time/);
      await refused({ since: new Date(Date.now() + 60_000).toISOString() }, /^since must not be in the future/);
      await refused(
        { since: new Date(Date.now() - 8 * 24 * HOUR).toISOString() },
        /^since must be within the change log's retention \(7 days\)/,
      );
      const local = await create({ user: owner.id, url: 'http://127.0.0.1:3000/hook' }, { ...POLICY, allowPrivate: true });
      expect(local.record.url).toBe('http://127.0.0.1:3000/hook');
      await rejection(create({ user: randomUUID() }), NotFoundError);
    });
  });

  describe('reading, updating, deleting', () => {
    it('lists the user’s endpoints oldest first and gets one by id; 404 for an unknown one', async () => {
      const owner = await createUser(store);
      const first = (await create({ user: owner.id })).record;
      const second = (await create({ user: owner.id, url: 'https://b.example.com/' })).record;
      expect((await listWebhooks(store, { id: owner.id })).map((record) => record.id)).toEqual([first.id, second.id]);
      expect(await getWebhook(store, second.id)).toEqual(second);
      await rejection(getWebhook(store, randomUUID()), NotFoundError);
      await rejection(getWebhook(store, 'nope'), NotFoundError);
      await rejection(listWebhooks(store, { id: randomUUID() }), NotFoundError);
      await deleteWebhook(store, first.id);
      await rejection(deleteWebhook(store, first.id), NotFoundError);
      expect((await listWebhooks(store, owner.email)).map((record) => record.id)).toEqual([second.id]);
    });

    it('updates url, events and description; checks the URL again', async () => {
      const owner = await createUser(store);
      const { record } = await create({ user: owner.id });
      const updated = await updateWebhook(
        store,
        record.id,
        { url: 'https://NEW.example.com', events: ['contact.merged'], description: ' ' },
        POLICY,
      );
      expect(updated).toMatchObject({ url: 'https://new.example.com/', events: ['contact.merged'], description: null, status: 'enabled' });
      await rejection(updateWebhook(store, record.id, { url: 'https://[::1]/' }, POLICY), InputError);
      await rejection(updateWebhook(store, randomUUID(), { description: 'x' }, POLICY), NotFoundError);
    });

    it('re-enabling resumes from the cursor: the changes made while disabled are delivered', async () => {
      const owner = await createUser(store);
      const { record } = await create({ user: owner.id });
      const disabled = await updateWebhook(store, record.id, { status: 'disabled' }, POLICY);
      expect(disabled).toMatchObject({ status: 'disabled', disabledReason: DISABLED_BY_ADMIN });
      const meanwhile = await importContacts(owner, 2);
      await other.run('UPDATE webhooks SET failed_attempts = 3 WHERE id = ?', record.id);
      const enabled = await updateWebhook(store, record.id, { status: 'enabled' }, POLICY);
      expect(enabled).toMatchObject({ status: 'enabled', disabledReason: null, failedAttempts: 0, cursor: record.cursor });
      expect(await pending(record.id)).toEqual(meanwhile.sort());
    });

    it('re-enabling after the retention starts from now, and says since when', async () => {
      const owner = await createUser(store);
      const { record } = await create({ user: owner.id });
      await updateWebhook(store, record.id, { status: 'disabled' }, POLICY);
      await importContacts(owner, 2);
      const policy = { ...POLICY, retentionMs: HOUR };
      await other.run('UPDATE webhooks SET pending_since = ? WHERE id = ?', new Date(Date.now() - 2 * HOUR).toISOString(), record.id);
      const before = Date.now();
      const enabled = await updateWebhook(store, record.id, { status: 'enabled' }, policy);
      expect(enabled.cursor).toEqual({ seq: (await store.contacts.changeLog(owner.id)).currentSeq, after: null });
      expect(Date.parse(enabled.pendingSince)).toBeGreaterThanOrEqual(before);
      expect(await pending(record.id)).toEqual([]);
    });
  });

  it('a rotation gives a new secret and keeps the previous one for 24 hours', async () => {
    const owner = await createUser(store);
    const { record, secret: first } = await create({ user: owner.id });
    const before = Date.now();
    const { secret: second } = await rotateWebhookSecret(store, record.id);
    expect(second).toMatch(/^whsec_/);
    expect(second).not.toBe(first);
    const rotated = await getWebhook(store, record.id);
    expect(await openWebhookSecret(store.oauth, record.id, rotated.sealedSecret)).toBe(second);
    expect(await openWebhookSecret(store.oauth, record.id, rotated.sealedPreviousSecret!)).toBe(first);
    const until = Date.parse(rotated.previousSecretUntil!);
    expect(until).toBeGreaterThanOrEqual(before + PREVIOUS_SECRET_VALIDITY_MS);
    expect(until).toBeLessThanOrEqual(Date.now() + PREVIOUS_SECRET_VALIDITY_MS);
    expect(PREVIOUS_SECRET_VALIDITY_MS).toBe(24 * HOUR);
    await rejection(rotateWebhookSecret(store, randomUUID()), NotFoundError);
  });

  describe('replayWebhook', () => {
    it('moves the cursor back to the first change at or after since, never forward, and retries at once', async () => {
      const owner = await createUser(store);
      await importContacts(owner, 1);
      const since = await moment();
      const replayed = await importContacts(owner, 2);
      const { record } = await create({ user: owner.id });
      await other.run(
        'UPDATE webhooks SET failed_attempts = 2, next_attempt_at = ? WHERE id = ?',
        new Date(Date.now() + HOUR).toISOString(),
        record.id,
      );
      expect(await pending(record.id)).toEqual([]);
      const moved = await replayWebhook(store, record.id, since, POLICY);
      expect(moved).toMatchObject({ failedAttempts: 0, nextAttemptAt: null, pendingSince: since });
      expect(await pending(record.id)).toEqual(replayed.sort());
      const unmoved = await replayWebhook(store, record.id, new Date().toISOString(), POLICY);
      expect(unmoved.cursor).toEqual(moved.cursor);
    });

    it('refuses a disabled endpoint with 409, a since beyond the retention with 400, an unknown endpoint with 404', async () => {
      const owner = await createUser(store);
      const { record } = await create({ user: owner.id });
      const old = new Date(Date.now() - 8 * 24 * HOUR).toISOString();
      expect((await rejection(replayWebhook(store, record.id, old, POLICY), InputError)).status).toBe(400);
      await updateWebhook(store, record.id, { status: 'disabled' }, POLICY);
      expect((await rejection(replayWebhook(store, record.id, new Date().toISOString(), POLICY), ConflictError)).status).toBe(409);
      await rejection(replayWebhook(store, randomUUID(), new Date().toISOString(), POLICY), NotFoundError);
    });
  });

  it('shows lag in events and seconds, and never a secret', async () => {
    const owner = await createUser(store);
    const { record, secret } = await create({ user: owner.id, description: 'CRM' });
    expect(await webhookLag(store, record)).toEqual({ events: 0, seconds: 0 });
    await importContacts(owner, 3);
    const lag = await webhookLag(store, record, Date.now() + 5_000);
    expect(lag.events).toBe(3);
    expect(lag.seconds).toBeGreaterThanOrEqual(5);
    const view = webhookView(record, lag);
    expect(view).toEqual({
      id: record.id,
      url: URL,
      events: [...WEBHOOK_EVENT_TYPES],
      description: 'CRM',
      status: 'enabled',
      disabled_reason: null,
      lag,
      created_at: record.createdAt,
      updated_at: record.updatedAt,
    });
    expect(JSON.stringify(view)).not.toContain(secret.slice(6));
    expect(JSON.stringify(view)).not.toContain(record.sealedSecret);
  });

  it('lists delivery attempts latest first, 1 to 100 at a time', async () => {
    const owner = await createUser(store);
    const { record } = await create({ user: owner.id });
    const base = Date.now() - 1000;
    const attempt = (n: number) => ({
      webhookId: record.id,
      eventId: `msg_${n}`,
      type: 'contact.upserted' as const,
      attempt: n,
      statusCode: n === 1 ? 503 : 200,
      error: n === 1 ? 'HTTP 503' : null,
      durationMs: 12,
      attemptedAt: new Date(base + n).toISOString(),
    });
    await store.webhooks.recordDeliveries([attempt(1), attempt(2), attempt(3)]);
    expect((await listWebhookDeliveries(store, record.id)).map((delivery) => delivery.eventId)).toEqual(['msg_3', 'msg_2', 'msg_1']);
    const [latest] = await listWebhookDeliveries(store, record.id, 1);
    expect(webhookDeliveryView(latest!)).toEqual({
      event_id: 'msg_3',
      type: 'contact.upserted',
      attempt: 3,
      status_code: 200,
      error: null,
      duration_ms: 12,
      attempted_at: attempt(3).attemptedAt,
    });
    for (const limit of [0, 101, 1.5]) await rejection(listWebhookDeliveries(store, record.id, limit), InputError);
    await rejection(listWebhookDeliveries(store, randomUUID()), NotFoundError);
  });
});
