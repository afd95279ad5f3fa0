import { createServer, type IncomingMessage, type Server } from 'node:http';
import { Webhook } from 'standardwebhooks';
import type { WebhookEventType } from '../../src/domain/webhooks.js';
import { createWebhook, type CreatedWebhook } from '../../src/operations/webhooks.js';
import type { Store, WebhookDelivery } from '../../src/store/store.js';
import { listenOnFreePort } from './listen.js';

/** One POST the receiver took, with what verifying it found. */
export interface ReceivedDelivery {
  id: string;
  timestamp: string;
  signature: string;
  body: string;
  /** The parsed event, once verified with one of the endpoint's secrets. */
  event: { type: WebhookEventType; timestamp: string; data: { type: string; id: string; [field: string]: unknown } };
  /** The indexes of the endpoint's secrets (as registered) that verified it. */
  verifiedWith: number[];
  /** What the receiver answered. */
  status: number;
  /** When it arrived (Date.now(), once its body was read). */
  receivedAt: number;
}

interface Endpoint {
  secrets: string[];
  /** Statuses answered in turn; the last one is repeated. */
  statuses: number[];
  deliveries: ReceivedDelivery[];
  /** Requests no secret verified (a real receiver refuses them): a test expects none. */
  unverified: number;
  /** How long each answer waits: a slow receiver, whose stream of events lasts. */
  delayMs: number;
  /** Requests being answered now, and the most there were at once. */
  inFlight: number;
  mostInFlight: number;
}

/**
 * A webhook receiver as an integrator writes one: a node:http server on loopback that verifies every delivery with the
 * `standardwebhooks` package (Webhook.verify, with each of the endpoint's secrets), answers 400 to one that does not
 * verify, and else the status the test asked for. Each endpoint is a path of its own.
 */
export class WebhookReceiver {
  private readonly endpoints = new Map<string, Endpoint>();
  private paths = 0;
  origin = '';

  private constructor(private readonly server: Server) {}

  static async start(): Promise<WebhookReceiver> {
    const server = createServer();
    const receiver = new WebhookReceiver(server);
    server.on('request', (request, response) => {
      void receiver.take(request).then((status) => response.writeHead(status, { 'content-type': 'text/plain' }).end(`answered ${status}`));
    });
    receiver.origin = (await listenOnFreePort(server)).origin;
    return receiver;
  }

  /** A new path of the receiver, verifying with `secrets`, answering `statuses` in turn (200 by default) after `delayMs`. */
  endpoint(secrets: string[], statuses: number[] = [200], delayMs = 0): { url: string; path: string } {
    this.paths += 1;
    const path = `/hooks/${this.paths}`;
    this.endpoints.set(path, { secrets, statuses: [...statuses], deliveries: [], unverified: 0, delayMs, inFlight: 0, mostInFlight: 0 });
    return { url: `${this.origin}${path}`, path };
  }

  /** Adds a secret the path verifies with (after a rotation). */
  addSecret(path: string, secret: string): void {
    this.of(path).secrets.push(secret);
  }

  deliveries(path: string): ReceivedDelivery[] {
    return this.of(path).deliveries;
  }

  /** The verified deliveries that were acknowledged (2xx), one per webhook-id. */
  acknowledgedIds(path: string): Set<string> {
    return new Set(
      this.of(path)
        .deliveries.filter((delivery) => delivery.status < 300)
        .map((delivery) => delivery.id),
    );
  }

  unverified(path: string): number {
    return this.of(path).unverified;
  }

  /** The most requests to the path the receiver was answering at once. */
  mostInFlight(path: string): number {
    return this.of(path).mostInFlight;
  }

  close(): Promise<void> {
    this.server.closeAllConnections();
    return new Promise((resolve) => this.server.close(() => resolve()));
  }

  private of(path: string): Endpoint {
    const endpoint = this.endpoints.get(path);
    if (!endpoint) throw new Error(`no endpoint ${path}`);
    return endpoint;
  }

  private async take(request: IncomingMessage): Promise<number> {
    const endpoint = this.endpoints.get(request.url ?? '');
    if (!endpoint || request.method !== 'POST') return 404;
    endpoint.inFlight += 1;
    endpoint.mostInFlight = Math.max(endpoint.mostInFlight, endpoint.inFlight);
    try {
      return await this.answer(endpoint, request);
    } finally {
      endpoint.inFlight -= 1;
    }
  }

  private async answer(endpoint: Endpoint, request: IncomingMessage): Promise<number> {
    const chunks: Buffer[] = [];
    for await (const chunk of request) chunks.push(chunk as Buffer);
    const receivedAt = Date.now();
    const body = Buffer.concat(chunks).toString('utf8');
    const headers = request.headers as Record<string, string>;
    const verifiedWith: number[] = [];
    let event: unknown;
    endpoint.secrets.forEach((secret, index) => {
      try {
        event = new Webhook(secret).verify(body, headers);
        verifiedWith.push(index);
      } catch {
        // not this secret's signature
      }
    });
    if (verifiedWith.length === 0) {
      endpoint.unverified += 1;
      return 400;
    }
    if (endpoint.delayMs > 0) await new Promise((resolve) => setTimeout(resolve, endpoint.delayMs));
    const status = endpoint.statuses.length > 1 ? endpoint.statuses.shift()! : endpoint.statuses[0]!;
    endpoint.deliveries.push({
      id: headers['webhook-id']!,
      timestamp: headers['webhook-timestamp']!,
      signature: headers['webhook-signature']!,
      body,
      event: event as ReceivedDelivery['event'],
      verifiedWith,
      status,
      receivedAt,
    });
    return status;
  }
}

/** An endpoint of `ownerId` from the current end of the owner's log, made as the admin API makes one (its secret shown once). */
export function createTestWebhook(store: Store, ownerId: string, url: string, events?: WebhookEventType[]): Promise<CreatedWebhook> {
  return createWebhook(store, { user: ownerId, url, events }, { allowPrivate: true, retentionMs: 30 * 86_400_000 });
}

/**
 * The webhook-ids received more than once that no retry explains: an event comes twice only when a failed attempt
 * (on a busy machine, a timeout) made its batch go again, as attempt 2 or more. `attempts` is every attempt the
 * endpoint's deliveries list holds.
 */
export function duplicatesWithoutRetry(received: readonly ReceivedDelivery[], attempts: readonly WebhookDelivery[]): string[] {
  const times = new Map<string, number>();
  for (const { id } of received) times.set(id, (times.get(id) ?? 0) + 1);
  const retried = new Set(attempts.filter((attempt) => attempt.attempt > 1).map((attempt) => attempt.eventId));
  return [...times].filter(([id, count]) => count > 1 && !retried.has(id)).map(([id]) => id);
}
