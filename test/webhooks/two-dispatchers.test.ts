import { afterAll, beforeAll, expect, it, vi } from 'vitest';
import { openStore } from '../../src/store/open-store.js';
import { parseDatabaseUrl } from '../../src/domain/database-url.js';
import type { Store, User, WebhookRecord } from '../../src/store/store.js';
import { WebhookDispatcher } from '../../src/webhooks/dispatcher.js';
import { createWebhookSender } from '../../src/webhooks/sender.js';
import { WebhookSigner } from '../../src/webhooks/signer.js';
import { describeEachBackend } from '../support/backends.js';
import { contactRecord, createUser } from '../support/seed.js';
import { createTestWebhook, duplicatesWithoutRetry, WebhookReceiver } from '../support/webhook-receiver.js';

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
        sender: createWebhookSender({ allowPrivate: true, timeoutMs: 10_000 }),
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
      const attempts = await store.webhooks.listDeliveries(record.id, 10_000);
      const failed = attempts.filter((attempt) => attempt.error !== null);
      expect(duplicatesWithoutRetry(receiver.deliveries(path), attempts), JSON.stringify({ warnings, failed })).toEqual([]);
      expect(receiver.acknowledgedIds(path).size).toBe(EVENTS_EACH);
    }
  });
});
