import { createServer, type Socket } from 'node:net';
import type { Store } from '../../src/store/store.js';
import { listenOnFreePort } from './listen.js';
import { contactRecord, createUser } from './seed.js';
import { createTestWebhook, WebhookReceiver } from './webhook-receiver.js';

/** A receiver that accepts every connection and never answers: each attempt to it lasts the whole WEBHOOK_TIMEOUT_MS. */
export async function startSilentReceiver(): Promise<{ origin: string; close(): Promise<void> }> {
  const sockets = new Set<Socket>();
  const server = createServer((socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    socket.on('error', () => undefined);
    socket.resume();
  });
  const { origin } = await listenOnFreePort(server);
  return {
    origin,
    close: () => {
      for (const socket of sockets) socket.destroy();
      return new Promise((resolve) => server.close(() => resolve()));
    },
  };
}

export interface FairnessScenario {
  /** Endpoints of owner A on the silent receiver. */
  deadEndpoints: number;
  /** Contacts owner B writes, one at a time. */
  writes: number;
  gapMs: number;
  /** How long to wait for B's last event before giving up. */
  deliveryTimeoutMs: number;
}

export interface LatencyFigures {
  count: number;
  p50: number;
  p99: number;
  max: number;
}

const percentile = (sorted: readonly number[], p: number) => sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!;

export function latencyFigures(latencies: readonly number[]): LatencyFigures {
  const sorted = [...latencies].sort((a, b) => a - b);
  return { count: sorted.length, p50: percentile(sorted, 50), p99: percentile(sorted, 99), max: sorted.at(-1)! };
}

/**
 * Issue 33's scenario, against whatever dispatcher delivers from `store`'s database (a `serve` process): owner A has
 * `deadEndpoints` endpoints on a receiver that never answers, owner B one healthy endpoint (a verifying receiver). A
 * writes a contact, so that every one of A's endpoints has work; then B writes `writes` contacts, `gapMs` apart. Returns
 * B's write-to-delivery latencies in ms (from each write's return to its event's arrival at B's receiver), and A's id.
 */
export async function latenciesBehindDeadEndpoints(
  store: Store,
  scenario: FairnessScenario,
): Promise<{ latencies: number[]; deadOwnerId: string }> {
  const silent = await startSilentReceiver();
  const receiver = await WebhookReceiver.start();
  try {
    const a = await createUser(store, 'pro', 'Owner A');
    for (let index = 0; index < scenario.deadEndpoints; index += 1) {
      await createTestWebhook(store, a.id, `${silent.origin}/dead/${index}`);
    }
    const b = await createUser(store, 'pro', 'Owner B');
    const { url, path } = receiver.endpoint([]);
    receiver.addSecret(path, (await createTestWebhook(store, b.id, url)).secret);

    await store.contacts.importContacts(a.id, [contactRecord({ name: 'Stuck' })]);
    const written = new Map<string, number>();
    for (let index = 0; index < scenario.writes; index += 1) {
      const id = crypto.randomUUID();
      await store.contacts.importContacts(b.id, [contactRecord({ name: `Healthy ${index + 1}` }, id)]);
      written.set(id, Date.now());
      await new Promise((resolve) => setTimeout(resolve, scenario.gapMs));
    }
    const deadline = Date.now() + scenario.deliveryTimeoutMs;
    const arrivals = new Map<string, number>();
    while (arrivals.size < written.size) {
      if (Date.now() > deadline) throw new Error(`${written.size - arrivals.size} of B's ${written.size} events never arrived`);
      await new Promise((resolve) => setTimeout(resolve, 100));
      for (const delivery of receiver.deliveries(path)) {
        if (delivery.status < 300 && !arrivals.has(delivery.event.data.id)) arrivals.set(delivery.event.data.id, delivery.receivedAt);
      }
    }
    return { latencies: [...written].map(([id, at]) => arrivals.get(id)! - at), deadOwnerId: a.id };
  } finally {
    await receiver.close();
    await silent.close();
  }
}
