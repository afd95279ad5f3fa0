import { Webhook } from 'standardwebhooks';
import { LRUCache } from 'lru-cache';
import { openWebhookSecret } from '../operations/webhook-secrets.js';
import type { SecretSource } from '../operations/sealed-text.js';
import type { WebhookRecord } from '../store/store.js';

/** Opened secrets kept per endpoint and sealed value: enough for every endpoint a process delivers to, twice. */
const OPENED_SECRETS = 2048;

/** The keys one endpoint's deliveries are signed with now: its secret, and the one before it during a rotation's overlap. */
export interface SigningKeys {
  /** `v1,<base64 HMAC-SHA256 of "id.timestamp.body">` per key, space-separated, the current secret first. */
  sign(eventId: string, timestamp: Date, body: string): string;
}

/**
 * Signs deliveries as Standard Webhooks describes (the `standardwebhooks` package, which receivers verify with). A
 * sealed secret is opened once (AES-GCM under the service key) and kept: a delivery costs two HMACs at most.
 */
export class WebhookSigner {
  private readonly opened = new LRUCache<string, Promise<Webhook>>({ max: OPENED_SECRETS });

  constructor(private readonly secrets: SecretSource) {}

  /** The endpoint's keys at `now`; rejects when a sealed secret does not open (altered, or another database's). */
  async keysFor(endpoint: Pick<WebhookRecord, 'id' | 'sealedSecret' | 'sealedPreviousSecret' | 'previousSecretUntil'>, now: number) {
    const previousValid =
      endpoint.sealedPreviousSecret !== null && endpoint.previousSecretUntil !== null && Date.parse(endpoint.previousSecretUntil) > now;
    const sealed = previousValid ? [endpoint.sealedSecret, endpoint.sealedPreviousSecret!] : [endpoint.sealedSecret];
    const webhooks = await Promise.all(sealed.map((value) => this.open(endpoint.id, value)));
    return {
      sign: (eventId: string, timestamp: Date, body: string) => webhooks.map((webhook) => webhook.sign(eventId, timestamp, body)).join(' '),
    } satisfies SigningKeys;
  }

  private open(webhookId: string, sealed: string): Promise<Webhook> {
    const key = `${webhookId}\0${sealed}`;
    let webhook = this.opened.get(key);
    if (webhook === undefined) {
      webhook = openWebhookSecret(this.secrets, webhookId, sealed).then((secret) => new Webhook(secret));
      // A failure (the database down while the service key is read) is tried again at the next batch.
      webhook.catch(() => this.opened.delete(key));
      this.opened.set(key, webhook);
    }
    return webhook;
  }
}
