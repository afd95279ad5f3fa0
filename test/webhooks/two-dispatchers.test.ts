import { afterAll, beforeAll, expect, it, vi } from 'vitest';
import { openStore, parseDatabaseUrl } from '../../src/store/open-store.js';
import type { Store, User, WebhookRecord } from '../../src/store/store.js';
import { WebhookDispatcher } from '../../src/webhooks/dispatcher.js';
import { createWebhookSender } from '../../src/webhooks/sender.js';
import { WebhookSigner } from '../../src/webhooks/signer.js';
import { describeEachBackend } from '../support/backends.js';
import { contactRecord, createUser } from '../support/seed.js';
import { createTestWebhook, WebhookReceiver } from '../support/webhook-receiver.js';

const ENDPOINTS = 4;
const EVENTS_EACH = 1000;

/**
 * Two dispatchers on one database, each with a store of its own (as two `serve` instances on one PostgreSQL, or two
 * processes on one SQLite file): the leases give each endpoint to one of them at a time, so no event is delivered twice
 * while every receiver answers 2xx.
 */
describeEachBackend('two webhook dispatchers on one database', (db) => {
  let stores: Store[] = [];
  let dispatchers: WebhookDispatcher[] = [];
  let receiver: WebhookReceiver;
  /** What the dispatchers warned about: a database error, after which a batch is sent again, would explain a duplicate. */
  const warnings: unknown[] = [];

  beforeAll(async () => {
    receiver = await WebhookReceiver.start();
    stores = [db().store, await openStore(parseDatabaseUrl(db().databaseUrl))];
    dispatchers = stores.map((store) =>
      new WebhookDispatcher({
        store,
        sender: createWebhookSender({ allowPrivate: true, timeoutMs: 5000 }),
        signer: new WebhookSigner(store.oauth),
        retrySchedule: [50],
        retentionDays: 30,
        log: { info: () => undefined, warn: (details, message) => warnings.push({ message, details }) },
      }).start(),
    );
  });
  afterAll(async () => {
    await Promise.all(dispatchers.map((dispatcher) => dispatcher.stop(5000)));
    await stores[1]?.close();
    await receiver?.close();
  });

  it('delivers each event once, except by retry: unique webhook-ids and total deliveries', async () => {
    const store = stores[0]!;
    const endpoints: { user: User; path: string; record: WebhookRecord }[] = [];
    for (let index = 0; index < ENDPOINTS; index += 1) {
      const user = await createUser(store);
      const { url, path } = receiver.endpoint([]);
      const { record, secret } = await createTestWebhook(store, user.id, url);
      receiver.addSecret(path, secret);
      endpoints.push({ user, path, record });
    }
    // Imports in turns of 100 contacts, so that the dispatchers take endpoints while the changes keep coming.
    for (let turn = 0; turn < EVENTS_EACH / 100; turn += 1) {
      for (const { user } of endpoints) {
        const records = Array.from({ length: 100 }, (_, index) => contactRecord({ name: `Contact ${turn * 100 + index}` }));
        await store.contacts.importContacts(user.id, records);
      }
    }
    await vi.waitFor(
      () => {
        for (const { path } of endpoints) expect(receiver.acknowledgedIds(path).size).toBe(EVENTS_EACH);
      },
      { timeout: 60_000, interval: 100 },
    );
    for (const { path, record } of endpoints) {
      expect(receiver.unverified(path)).toBe(0);
      // An event comes twice only when a failed attempt made its batch go again (a retry, attempt 2 or more): on a busy
      // machine an attempt may time out. Every attempt is in the endpoint's deliveries.
      const attempts = await store.webhooks.listDeliveries(record.id, 10_000);
      const sent = new Map<string, number>();
      for (const { id } of receiver.deliveries(path)) sent.set(id, (sent.get(id) ?? 0) + 1);
      const twice = [...sent].filter(([, times]) => times > 1).map(([id]) => id);
      const retried = new Set(attempts.filter((attempt) => attempt.attempt > 1).map((attempt) => attempt.eventId));
      expect(
        twice.filter((id) => !retried.has(id)),
        JSON.stringify({ warnings, failed: attempts.filter((attempt) => attempt.error !== null) }),
      ).toEqual([]);
      expect(sent.size).toBe(EVENTS_EACH);
    }
  });
});
