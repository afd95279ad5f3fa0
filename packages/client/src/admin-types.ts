import type { operations } from './admin-openapi-types.js';

type JsonBody<Answer> = Answer extends { content: { 'application/json': infer Body } } ? Body : never;
type RequestJson<Operation> = Operation extends { requestBody?: infer Body } ? JsonBody<NonNullable<Body>> : never;

/** A user of the host product: `id`, `email`, `name`, `plan` (`free` or `pro`) and `created_at`. */
export type AdminUser = JsonBody<operations['getUser']['responses'][200]>;

/** `createUser`'s input: `email` and `plan`; `id` (your own UUID for the user) and `name` optional. */
export type NewUser = RequestJson<operations['createUser']>;

/** `updateUser`'s input: the fields to change (`email`, `name`, `plan`); the others keep their values. */
export type UserChanges = RequestJson<operations['updateUser']>;

/** `createKey`'s input: `label`, `scopes` and `expires_at`, all optional. */
export type NewKey = RequestJson<operations['createKey']>;

/** A new key: `key` is its secret, in this answer only; `start` is what a settings page may show of it. */
export type CreatedKey = JsonBody<operations['createKey']['responses'][201]>;

/** A rotated key's successor, with its secret, and `replaces`: the id of the key it replaces. */
export type RotatedKey = JsonBody<operations['rotateKey']['responses'][201]>;

/** A key as a settings page lists it: never its secret; `status` is `active`, `expired` or `revoked`. */
export type ListedKey = JsonBody<operations['listKeys']['responses'][200]>['data'][number];

/** What an import did with the body's records, as the CLI's `contacts import --json` prints it. */
export type ImportSummary = JsonBody<operations['importContacts']['responses'][200]>;

/** The media types an import reads: JSON (an array), NDJSON, CSV (the CLI's columns, or a LinkedIn, Google or Outlook export), vCard. */
export type ImportContentType = keyof operations['importContacts']['requestBody']['content'];

/** A merge done: the contact `merged` away, and the contact it went `into`. */
export type MergedContact = JsonBody<operations['mergeContact']['responses'][200]>;

/** A webhook endpoint: `url`, `events`, `status` (`enabled` or `disabled`), `disabled_reason`, `lag`; never its secret. */
export type Webhook = JsonBody<operations['getWebhook']['responses'][200]>;

/** A new endpoint, with `secret` (`whsec_…`): its signing secret, in this answer only. */
export type CreatedWebhook = JsonBody<operations['createWebhook']['responses'][201]>;

/** `createWebhook`'s input: `url`; `events` (all three when absent), `description` and `since` optional. */
export type NewWebhook = RequestJson<operations['createWebhook']>;

/** `updateWebhook`'s input: the fields to change (`url`, `events`, `description`, `status`); the others keep their values. */
export type WebhookChanges = RequestJson<operations['updateWebhook']>;

/** A rotation's new signing secret; the previous one goes on signing for 24 hours. */
export type RotatedWebhookSecret = JsonBody<operations['rotateWebhookSecret']['responses'][200]>;

/** One attempt to deliver one event: `event_id` (its `webhook-id`), `type`, `attempt`, `status_code`, `error`, … */
export type WebhookDelivery = JsonBody<operations['listWebhookDeliveries']['responses'][200]>['data'][number];
