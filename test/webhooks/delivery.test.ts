import { afterAll, beforeAll, expect, it, vi } from 'vitest';
import { Webhook } from 'standardwebhooks';
import { createMetrics, type Metrics } from '../../src/metrics/metrics.js';
import { getWebhook, listWebhookDeliveries, rotateWebhookSecret, updateWebhook } from '../../src/operations/webhooks.js';
import type { WebhookEventType } from '../../src/domain/webhooks.js';
import type { Store, User } from '../../src/store/store.js';
import { WebhookDispatcher } from '../../src/webhooks/dispatcher.js';
import { createWebhookSender } from '../../src/webhooks/sender.js';
import { WebhookSigner } from '../../src/webhooks/signer.js';
import { describeEachBackend } from '../support/backends.js';
import { contactRecord, createUser } from '../support/seed.js';
import { createTestWebhook, duplicatesWithoutRetry, WebhookReceiver } from '../support/webhook-receiver.js';

/** Long enough for thousands of events on a busy machine; what is measured is what arrives, never how fast. */
const UNTIL_DELIVERED = { timeout: 60_000, interval: 100 };

/**
 * The dispatcher end to end, once per database: a real receiver on loopback verifies every delivery with the
 * `standardwebhooks` package, as an integrator's would.
 */
describeEachBackend('webhook delivery', (db) => {
  let store: Store;
  let receiver: WebhookReceiver;
  let dispatcher: WebhookDispatcher;
  let metrics: Metrics;
  const warnings: string[] = [];

  beforeAll(async () => {
    store = db().store;
    receiver = await WebhookReceiver.start();
    metrics = createMetrics();
    dispatcher = new WebhookDispatcher({
      store,
      sender: createWebhookSender({ allowPrivate: true, timeoutMs: 10_000 }),
      signer: new WebhookSigner(store.oauth),
      retrySchedule: [50, 50],
      retentionDays: 30,
      log: { info: () => undefined, warn: (_details, message) => warnings.push(message) },
      metrics: metrics.webhooks,
    }).start();
  });
  afterAll(async () => {
    await dispatcher?.stop(5000);
    await receiver?.close();
  });

  /** A user with an endpoint on a path of its own of the receiver, which verifies with the endpoint's secret. */
  async function endpointOf(statuses?: number[], events?: WebhookEventType[], delayMs?: number) {
    const user = await createUser(store);
    const { url, path } = receiver.endpoint([], statuses, delayMs);
    const { record, secret } = await createTestWebhook(store, user.id, url, events);
    receiver.addSecret(path, secret);
    return { user, record, path, secret };
  }

  async function importNumbered(user: User, count: number, prefix: string): Promise<string[]> {
    const ids = Array.from({ length: count }, () => crypto.randomUUID());
    await store.contacts.importContacts(
      user.id,
      ids.map((id, index) => contactRecord({ name: `${prefix} ${index + 1}` }, id)),
    );
    return ids;
  }

  it('delivers a 5,000-contact import, a merge and a delete as 5,002 verified events of the right types', async () => {
    const { user, path, record } = await endpointOf();
    const ids = await importNumbered(user, 5000, 'Imported');
    // The merge and the delete touch contacts of the import: they wait for it to arrive, or compaction would fold them.
    await vi.waitFor(() => expect(receiver.acknowledgedIds(path).size).toBe(5000), UNTIL_DELIVERED);
    await store.contacts.merge(user.id, ids[1]!, ids[0]!);
    await store.contacts.delete(user.id, [ids[2]!]);
    await vi.waitFor(() => expect(receiver.acknowledgedIds(path).size).toBe(5002), UNTIL_DELIVERED);

    expect(receiver.unverified(path)).toBe(0);
    expect(duplicatesWithoutRetry(receiver.deliveries(path), await store.webhooks.listDeliveries(record.id, 10_000))).toEqual([]);
    const deliveries = [...new Map(receiver.deliveries(path).map((delivery) => [delivery.id, delivery])).values()];
    expect(deliveries).toHaveLength(5002);
    const types = deliveries.map((delivery) => delivery.event.type);
    expect(types.filter((type) => type === 'contact.upserted')).toHaveLength(5000);
    expect(deliveries.find((delivery) => delivery.event.type === 'contact.merged')!.event).toEqual({
      type: 'contact.merged',
      timestamp: expect.any(String),
      data: { type: 'merge', id: ids[1], changed_at: expect.any(String), merged_into: ids[0] },
    });
    const deleted = deliveries.find((delivery) => delivery.event.type === 'contact.deleted')!.event;
    expect(deleted.data).toEqual({ type: 'delete', id: ids[2], changed_at: deleted.timestamp });
    const upserted = deliveries[0]!.event;
    expect(upserted.data).toMatchObject({ type: 'upsert', id: upserted.data.id, contact: { id: upserted.data.id } });
    expect(upserted.timestamp).toBe(upserted.data.changed_at);
    expect(new Set(deliveries.map((delivery) => delivery.event.data.id)).size).toBe(5000);
  });

  it('sends the same webhook-id again after 500, 500 and then 200, each attempt recorded', async () => {
    const { user, path, record } = await endpointOf([500, 500, 200]);
    const [id] = await importNumbered(user, 1, 'Retried');
    await vi.waitFor(() => expect(receiver.acknowledgedIds(path).size).toBe(1), UNTIL_DELIVERED);
    const deliveries = receiver.deliveries(path);
    expect(deliveries.map((delivery) => delivery.status)).toEqual([500, 500, 200]);
    expect(new Set(deliveries.map((delivery) => delivery.id)).size).toBe(1);
    expect(deliveries.every((delivery) => delivery.event.data.id === id)).toBe(true);
    await vi.waitFor(async () => expect(await listWebhookDeliveries(store, record.id, 10)).toHaveLength(3), UNTIL_DELIVERED);
    const attempts = await listWebhookDeliveries(store, record.id, 10);
    expect(attempts.map(({ attempt, statusCode }) => [attempt, statusCode])).toEqual([
      [3, 200],
      [2, 500],
      [1, 500],
    ]);
    expect(attempts[1]).toMatchObject({ eventId: deliveries[0]!.id, type: 'contact.upserted', error: 'HTTP 500: answered 500' });
    const after = await getWebhook(store, record.id);
    expect(after).toMatchObject({ status: 'enabled', failedAttempts: 0, nextAttemptAt: null });
  });

  it('sends at most 4 attempts at once to one endpoint, and after a failure one probe before the rest', async () => {
    const { user, path, record } = await endpointOf([500, 200], undefined, 50);
    await importNumbered(user, 40, 'Concurrent');
    await vi.waitFor(() => expect(receiver.acknowledgedIds(path).size).toBe(40), UNTIL_DELIVERED);
    expect(receiver.mostInFlight(path)).toBeGreaterThan(1);
    expect(receiver.mostInFlight(path)).toBeLessThanOrEqual(4);
    // The retry is one attempt; once it is acknowledged, the rest go as first attempts again.
    await vi.waitFor(async () => expect(await listWebhookDeliveries(store, record.id, 100)).toHaveLength(receiver.deliveries(path).length));
    const attempts = await listWebhookDeliveries(store, record.id, 100);
    expect(attempts.filter((attempt) => attempt.attempt === 2)).toHaveLength(1);
    expect(attempts.filter((attempt) => attempt.attempt > 2)).toEqual([]);
  });

  it('disables the endpoint at once on 410 Gone, and once the last retry of the schedule fails', async () => {
    const gone = await endpointOf([410, 200]);
    const failing = await endpointOf([503]);
    await importNumbered(gone.user, 1, 'Gone');
    await importNumbered(failing.user, 1, 'Failing');
    await vi.waitFor(async () => {
      expect(await getWebhook(store, gone.record.id)).toMatchObject({
        status: 'disabled',
        disabledReason: expect.stringMatching(/410 Gone/),
      });
      expect(await getWebhook(store, failing.record.id)).toMatchObject({
        status: 'disabled',
        disabledReason: expect.stringMatching(/^Retries exhausted: 3 attempts in a row failed \(last: HTTP 503: answered 503\)/),
      });
    }, UNTIL_DELIVERED);
    expect(receiver.deliveries(gone.path)).toHaveLength(1);
    // The first attempt and the schedule's two retries.
    expect(receiver.deliveries(failing.path)).toHaveLength(3);
    expect(warnings).toContain('webhook endpoint disabled');
    // A disabled endpoint gets nothing more, until it is enabled: it resumes from its cursor, the refused event first.
    await importNumbered(gone.user, 1, 'After');
    await new Promise((resolve) => setTimeout(resolve, 600));
    expect(receiver.deliveries(gone.path)).toHaveLength(1);
    await updateWebhook(store, gone.record.id, { status: 'enabled' }, { allowPrivate: true, retentionMs: 30 * 86_400_000 });
    await vi.waitFor(() => expect(receiver.acknowledgedIds(gone.path).size).toBe(2), UNTIL_DELIVERED);
    const [refused, ...after] = receiver.deliveries(gone.path).map((delivery) => delivery.id);
    expect(after[0]).toBe(refused);
  });

  it('signs with both secrets during a rotation’s overlap: each delivery verifies with either one alone', async () => {
    const { user, path, record, secret } = await endpointOf();
    const { secret: next } = await rotateWebhookSecret(store, record.id);
    receiver.addSecret(path, next);
    await importNumbered(user, 3, 'Rotated');
    await vi.waitFor(() => expect(receiver.acknowledgedIds(path).size).toBe(3), UNTIL_DELIVERED);
    for (const delivery of receiver.deliveries(path)) {
      // The new secret's signature first; the receiver verifies with [old, new].
      expect(delivery.signature).toMatch(/^v1,[A-Za-z0-9+/=]+ v1,[A-Za-z0-9+/=]+$/);
      expect(delivery.verifiedWith).toEqual([0, 1]);
      const headers = { 'webhook-id': delivery.id, 'webhook-timestamp': delivery.timestamp, 'webhook-signature': delivery.signature };
      expect(new Webhook(secret).verify(delivery.body, headers)).toEqual(delivery.event);
      expect(new Webhook(next).verify(delivery.body, headers)).toEqual(delivery.event);
      const [newest] = delivery.signature.split(' ');
      expect(() => new Webhook(secret).verify(delivery.body, { ...headers, 'webhook-signature': newest! })).toThrow();
    }
  });

  it('passes over the types an endpoint does not subscribe to', async () => {
    const { user, path, record } = await endpointOf(undefined, ['contact.deleted']);
    const ids = await importNumbered(user, 3, 'Quiet');
    await store.contacts.delete(user.id, [ids[0]!]);
    await vi.waitFor(() => expect(receiver.acknowledgedIds(path).size).toBe(1), UNTIL_DELIVERED);
    expect(receiver.deliveries(path).map((delivery) => delivery.event.data)).toEqual([
      { type: 'delete', id: ids[0], changed_at: expect.any(String) },
    ]);
    const log = await store.contacts.changeLog(user.id);
    await vi.waitFor(async () => expect((await getWebhook(store, record.id)).cursor).toEqual({ seq: log.currentSeq, after: null }));
  });

  it('reports deliveries by outcome, attempt durations and the lag of the endpoints it delivered to', async () => {
    const text = await metrics.registry.metrics();
    expect(text).toMatch(/contacts_api_webhook_deliveries_total\{outcome="success"\} \d+/);
    expect(text).toMatch(/contacts_api_webhook_deliveries_total\{outcome="http_error"\} \d+/);
    expect(text).toMatch(/contacts_api_webhook_attempt_duration_seconds_count \d+/);
    expect(text).toMatch(/contacts_api_webhook_lag_events\{webhook_id="[0-9a-f-]{36}"\} 0/);
  });
});
