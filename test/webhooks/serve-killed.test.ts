import { afterAll, beforeAll, expect, it, vi } from 'vitest';
import type { Store } from '../../src/store/store.js';
import { describeEachBackend } from '../support/backends.js';
import { killAll, processTree } from '../support/process-tree.js';
import { contactRecord, createUser } from '../support/seed.js';
import { startServerProcess, type ServerProcess } from '../support/server-process.js';
import { createTestWebhook, WebhookReceiver } from '../support/webhook-receiver.js';

const EVENTS = 5000;
/** A receiver this slow (4 attempts in flight to it) makes the stream last seconds, so the kill lands in its middle. */
const RECEIVER_DELAY_MS = 5;
/**
 * The killed processes' leases run out (15 s) before another process takes their endpoints: what arrives is checked,
 * not when.
 */
const UNTIL_DELIVERED = { timeout: 90_000, interval: 100 };

/**
 * The change log is the outbox: `serve` (a primary and two workers, as real processes) SIGKILLed in the middle of a
 * stream of events loses none of them. Started again, it resumes from the cursors: every event arrives at least once,
 * counted by unique webhook-id.
 */
describeEachBackend('webhooks survive serve being SIGKILLed', (db) => {
  let store: Store;
  let receiver: WebhookReceiver;
  let server: ServerProcess | undefined;
  const env = () => ({ DATABASE_URL: db().databaseUrl, WORKERS: '2', WEBHOOKS_ALLOW_PRIVATE_URLS: 'true', LOG_LEVEL: 'warn' });
  const killTree = (running: ServerProcess) => killAll(processTree(running.child.pid!));

  beforeAll(async () => {
    store = db().store;
    receiver = await WebhookReceiver.start();
  });
  afterAll(async () => {
    if (server) {
      killTree(server);
      await server.exited;
    }
    await receiver?.close();
  });

  it(`delivers every one of ${EVENTS} events at least once across a SIGKILL and a restart`, async () => {
    const user = await createUser(store);
    const { url, path } = receiver.endpoint([], [200], RECEIVER_DELAY_MS);
    const { secret } = await createTestWebhook(store, user.id, url);
    receiver.addSecret(path, secret);
    server = await startServerProcess(env());
    await store.contacts.importContacts(
      user.id,
      Array.from({ length: EVENTS }, (_, index) => contactRecord({ name: `Streamed ${index + 1}` })),
    );
    await vi.waitFor(() => expect(receiver.acknowledgedIds(path).size).toBeGreaterThanOrEqual(500), UNTIL_DELIVERED);
    killTree(server);
    await server.exited;
    const atKill = receiver.acknowledgedIds(path).size;
    // The scenario holds only if the kill came mid-stream.
    expect(atKill).toBeLessThan(EVENTS);

    server = await startServerProcess(env());
    await vi.waitFor(() => expect(receiver.acknowledgedIds(path).size).toBe(EVENTS), UNTIL_DELIVERED);
    expect(receiver.unverified(path)).toBe(0);
    const deliveries = receiver.deliveries(path);
    expect(deliveries.length).toBeGreaterThanOrEqual(EVENTS);
    expect(new Set(deliveries.map((delivery) => delivery.event.data.id)).size).toBe(EVENTS);
    expect(deliveries.every((delivery) => delivery.event.type === 'contact.upserted')).toBe(true);
  }, 180_000);
});
