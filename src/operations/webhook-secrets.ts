import { randomBytes } from 'node:crypto';
import { openText, sealText, type SecretSource } from './sealed-text.js';

/** Standard Webhooks: a secret is `whsec_` and the base64 of 24 to 64 random bytes. */
export const WEBHOOK_SECRET_PREFIX = 'whsec_';
const SECRET_BYTES = 32;
const PURPOSE = 'webhook secrets';

/** A new signing secret, in the form every Standard Webhooks library takes. */
export function generateWebhookSecret(): string {
  return WEBHOOK_SECRET_PREFIX + randomBytes(SECRET_BYTES).toString('base64');
}

/** A secret as the store keeps it: sealed, and bound to its endpoint. */
export const sealWebhookSecret = (secrets: SecretSource, webhookId: string, secret: string) =>
  sealText(secrets, PURPOSE, webhookId, secret);

export const openWebhookSecret = (secrets: SecretSource, webhookId: string, sealed: string) =>
  openText(secrets, PURPOSE, webhookId, sealed);
