import type {
  AdminUser,
  CreatedKey,
  CreatedWebhook,
  ImportContentType,
  ImportSummary,
  ListedKey,
  MergedContact,
  NewKey,
  NewUser,
  NewWebhook,
  RotatedKey,
  RotatedWebhookSecret,
  UserChanges,
  Webhook,
  WebhookChanges,
  WebhookDelivery,
} from './admin-types.js';
import { ApiTransport, parseBaseUrl, type TransportOptions } from './api-transport.js';
import { BadRequestError, ConflictError, IdempotencyKeyReusedError, NotFoundError, type StatusErrors } from './errors.js';

const ADMIN_PATH = 'admin/v1/';

/** The admin API's own statuses: a missing record, a conflict, a body's size or type, a reused Idempotency-Key. */
const ADMIN_STATUS_ERRORS: StatusErrors = {
  404: NotFoundError,
  409: ConflictError,
  413: BadRequestError,
  415: BadRequestError,
  422: IdempotencyKeyReusedError,
};

/** Options of a ContactsAdminClient. Only `baseUrl` and `adminToken` are required; the others are ContactsClient's. */
export interface ContactsAdminClientOptions extends TransportOptions {
  /** Where the admin API listens (the server's ADMIN_HOST and ADMIN_PORT), e.g. `http://127.0.0.1:3001`. */
  baseUrl: string | URL;
  /** The server's ADMIN_TOKEN, sent as `Authorization: Bearer <token>`. It can do anything: keep it on your server. */
  adminToken: string;
}

/** Options of any call. */
export interface CallOptions {
  /** Cancels the call, including any wait before a retry. */
  signal?: AbortSignal;
}

/** Options of a POST, which is always sent with an Idempotency-Key, so that no retry does it twice. */
export interface PostOptions extends CallOptions {
  /**
   * The Idempotency-Key (1 to 255 printable ASCII characters): the same key with the same request within 24 hours
   * gets the first answer again. Give one kept with your own record of the action (a form submission's id) to make a
   * retry after your process restarts safe too; without one, the client makes one per call, which its retries reuse.
   */
  idempotencyKey?: string;
}

/** Options of `importContacts`. */
export interface ImportOptions extends PostOptions {
  /**
   * The body's format: `application/json` (an array), `application/x-ndjson`, `text/csv` or `text/vcard`, or another name
   * of one of them (`text/x-vcard`, `application/ndjson`…).
   */
  contentType: ImportContentType;
  /**
   * The fields on which a record without an id updates the contact with the same value, if any (the CLI's --match):
   * emails ignoring ASCII case, LinkedIn URLs ignoring the scheme, `www.`, case, query and trailing slash. `[]` matches
   * nothing; absent, the server's default: `linkedin_url` for a LinkedIn Connections.csv, nothing for other bodies.
   */
  match?: readonly ('email' | 'linkedin_url')[];
  /** `true`: the same as `match: ['email']` (the CLI's --match-email). */
  matchEmail?: boolean;
}

/** Options of `rotateKey`. */
export interface RotateKeyOptions extends PostOptions {
  /** How long the old key keeps working, 0 to 604 800 seconds (a week); default 0. */
  overlapSeconds?: number;
}

/** Options of `listWebhookDeliveries`. */
export interface DeliveriesOptions extends CallOptions {
  /** How many attempts, 1 to 100; the server's default (50) when absent. */
  limit?: number;
}

interface Call<T> {
  method: 'GET' | 'POST' | 'PATCH' | 'DELETE';
  path: string;
  query?: Record<string, string>;
  /** A JSON value, or bytes with their content type. */
  json?: unknown;
  body?: { bytes: string | Uint8Array | Blob; contentType: string };
  accept: (json: unknown) => json is T;
  what: string;
  options: PostOptions;
}

/**
 * A typed client of the server's admin API (docs/admin-api.md), for the host product's backend: its users, their
 * plans, their API keys, their contacts and their webhook endpoints. The same retries and error classes as ContactsClient; a record that does
 * not exist is a NotFoundError, a conflict a ConflictError.
 *
 * @example
 * const admin = new ContactsAdminClient({ baseUrl: 'http://127.0.0.1:3001', adminToken: process.env.ADMIN_TOKEN! });
 * const user = await admin.createUser({ email: 'ada@example.com', plan: 'pro' });
 * const { key } = await admin.createKey(user.id, { label: 'Zapier' });
 */
export class ContactsAdminClient {
  readonly #base: URL;
  readonly #transport: ApiTransport;

  constructor(options: ContactsAdminClientOptions) {
    if (typeof options !== 'object' || options === null) {
      throw new TypeError('ContactsAdminClient: options are required: { baseUrl, adminToken }');
    }
    this.#base = new URL(ADMIN_PATH, parseBaseUrl('ContactsAdminClient', options.baseUrl));
    if (typeof options.adminToken !== 'string' || options.adminToken.trim() === '') {
      throw new TypeError('ContactsAdminClient: adminToken is required (the server’s ADMIN_TOKEN)');
    }
    this.#transport = new ApiTransport(`Bearer ${options.adminToken}`, options, ADMIN_STATUS_ERRORS);
  }

  /** Creates a user (`POST /users`) and the user's own self contact; ConflictError when the id or the email is taken. */
  async createUser(user: NewUser, options: PostOptions = {}): Promise<AdminUser> {
    return this.#send({ method: 'POST', path: 'users', json: user, accept: isUser, what: 'a user', options });
  }

  /** The user with this id (`GET /users/{id}`); NotFoundError when none. */
  async getUser(id: string, options: CallOptions = {}): Promise<AdminUser> {
    return this.#send({ method: 'GET', path: `users/${segment(id)}`, accept: isUser, what: 'a user', options });
  }

  /** The user holding this email, ignoring case (`GET /users?email=`), or null. */
  async findUserByEmail(email: string, options: CallOptions = {}): Promise<AdminUser | null> {
    const found = await this.#send({
      method: 'GET',
      path: 'users',
      query: { email },
      accept: isUserList,
      what: 'a list of users',
      options,
    });
    return found.data[0] ?? null;
  }

  /**
   * Changes the fields given (`PATCH /users/{id}`). A plan change reaches every worker within a second: on `free` the
   * user's keys get 403, on `pro` they work again.
   */
  async updateUser(id: string, changes: UserChanges, options: CallOptions = {}): Promise<AdminUser> {
    return this.#send({ method: 'PATCH', path: `users/${segment(id)}`, json: changes, accept: isUser, what: 'a user', options });
  }

  /** Deletes the user, their keys, OAuth grants and contacts (`DELETE /users/{id}`). */
  async deleteUser(id: string, options: CallOptions = {}): Promise<void> {
    await this.#send({ method: 'DELETE', path: `users/${segment(id)}`, accept: isEmpty, what: 'no content', options });
  }

  /** Makes a key for the user (`POST /users/{id}/keys`): its secret, `key`, is in this answer only. */
  async createKey(userId: string, key: NewKey = {}, options: PostOptions = {}): Promise<CreatedKey> {
    const path = `users/${segment(userId)}/keys`;
    return this.#send({ method: 'POST', path, json: key, accept: isCreatedKey, what: 'a new key', options });
  }

  /** Every key of the user (`GET /users/{id}/keys`), oldest first, revoked and expired ones too; never a secret. */
  async listKeys(userId: string, options: CallOptions = {}): Promise<ListedKey[]> {
    const path = `users/${segment(userId)}/keys`;
    return (await this.#send({ method: 'GET', path, accept: isKeyList, what: 'a list of keys', options })).data;
  }

  /** Makes the key's successor (`POST /keys/{keyId}/rotate`); the old key works `overlapSeconds` more. */
  async rotateKey(keyId: string, options: RotateKeyOptions = {}): Promise<RotatedKey> {
    const json = options.overlapSeconds === undefined ? {} : { overlap_seconds: options.overlapSeconds };
    const path = `keys/${segment(keyId)}/rotate`;
    return this.#send({ method: 'POST', path, json, accept: isRotatedKey, what: 'a rotated key', options });
  }

  /** Revokes the key and the OAuth grants made with it (`DELETE /keys/{keyId}`): refused everywhere within a second. */
  async revokeKey(keyId: string, options: CallOptions = {}): Promise<void> {
    await this.#send({ method: 'DELETE', path: `keys/${segment(keyId)}`, accept: isEmpty, what: 'no content', options });
  }

  /**
   * Imports contacts for the user (`POST /users/{id}/contacts/import`), all or nothing, as the CLI's
   * `contacts import` does a file; a record the server refuses is a BadRequestError naming it. A Blob (Node's
   * `fs.openAsBlob(path)`) is sent from the file as it is read, and again on a retry.
   */
  async importContacts(userId: string, body: string | Uint8Array | Blob, options: ImportOptions): Promise<ImportSummary> {
    return this.#send({
      method: 'POST',
      path: `users/${segment(userId)}/contacts/import`,
      query: importQuery(options),
      body: { bytes: body, contentType: options.contentType },
      accept: isImportSummary,
      what: 'an import summary',
      options,
    });
  }

  /** Soft-merges the user's contact into another of theirs (`POST /users/{id}/contacts/{contactId}/merge`). */
  async mergeContact(userId: string, contactId: string, into: string, options: PostOptions = {}): Promise<MergedContact> {
    const path = `users/${segment(userId)}/contacts/${segment(contactId)}/merge`;
    return this.#send({ method: 'POST', path, json: { into }, accept: isMerged, what: 'a merge', options });
  }

  /** Deletes the user's contact and the duplicates merged into it (`DELETE /users/{id}/contacts/{contactId}`). */
  async deleteContact(userId: string, contactId: string, options: CallOptions = {}): Promise<void> {
    const path = `users/${segment(userId)}/contacts/${segment(contactId)}`;
    await this.#send({ method: 'DELETE', path, accept: isEmpty, what: 'no content', options });
  }

  /**
   * Makes a webhook endpoint for the user (`POST /users/{id}/webhooks`): its signing secret, `secret`, is in this answer
   * only. The endpoint gets the user's changes from now on, or from `since`.
   */
  async createWebhook(userId: string, webhook: NewWebhook, options: PostOptions = {}): Promise<CreatedWebhook> {
    const path = `users/${segment(userId)}/webhooks`;
    return this.#send({ method: 'POST', path, json: webhook, accept: isCreatedWebhook, what: 'a new webhook', options });
  }

  /** Every webhook endpoint of the user (`GET /users/{id}/webhooks`), oldest first; never a secret. */
  async listWebhooks(userId: string, options: CallOptions = {}): Promise<Webhook[]> {
    const path = `users/${segment(userId)}/webhooks`;
    return (await this.#send({ method: 'GET', path, accept: isWebhookList, what: 'a list of webhooks', options })).data;
  }

  /** The webhook endpoint (`GET /webhooks/{webhookId}`), with its status and lag; NotFoundError when none. */
  async getWebhook(webhookId: string, options: CallOptions = {}): Promise<Webhook> {
    return this.#send({ method: 'GET', path: `webhooks/${segment(webhookId)}`, accept: isWebhook, what: 'a webhook', options });
  }

  /** Changes the fields given (`PATCH /webhooks/{webhookId}`); `status: 'disabled'` stops deliveries, `'enabled'` resumes them. */
  async updateWebhook(webhookId: string, changes: WebhookChanges, options: CallOptions = {}): Promise<Webhook> {
    const path = `webhooks/${segment(webhookId)}`;
    return this.#send({ method: 'PATCH', path, json: changes, accept: isWebhook, what: 'a webhook', options });
  }

  /** Deletes the webhook endpoint and its delivery attempts (`DELETE /webhooks/{webhookId}`). */
  async deleteWebhook(webhookId: string, options: CallOptions = {}): Promise<void> {
    await this.#send({ method: 'DELETE', path: `webhooks/${segment(webhookId)}`, accept: isEmpty, what: 'no content', options });
  }

  /** A new signing secret (`POST /webhooks/{webhookId}/rotate-secret`), in this answer only; the previous one signs for 24 hours more. */
  async rotateWebhookSecret(webhookId: string, options: PostOptions = {}): Promise<RotatedWebhookSecret> {
    const path = `webhooks/${segment(webhookId)}/rotate-secret`;
    return this.#send({ method: 'POST', path, json: {}, accept: isRotatedSecret, what: 'a new secret', options });
  }

  /** The endpoint's delivery attempts (`GET /webhooks/{webhookId}/deliveries`), the latest first. */
  async listWebhookDeliveries(webhookId: string, options: DeliveriesOptions = {}): Promise<WebhookDelivery[]> {
    const path = `webhooks/${segment(webhookId)}/deliveries`;
    const query = options.limit === undefined ? undefined : { limit: String(options.limit) };
    return (await this.#send({ method: 'GET', path, query, accept: isDeliveryList, what: 'a list of deliveries', options })).data;
  }

  /**
   * Delivers again the changes since `since` (`POST /webhooks/{webhookId}/replay`), with their original `webhook-id`;
   * a ConflictError when the endpoint is disabled.
   */
  async replayWebhook(webhookId: string, since: string | Date, options: PostOptions = {}): Promise<Webhook> {
    const json = { since: since instanceof Date ? since.toISOString() : since };
    const path = `webhooks/${segment(webhookId)}/replay`;
    return this.#send({ method: 'POST', path, json, accept: isWebhook, what: 'a webhook', options });
  }

  async #send<T>(call: Call<T>): Promise<T> {
    const url = new URL(call.path, this.#base);
    for (const [name, value] of Object.entries(call.query ?? {})) url.searchParams.set(name, value);
    const body = call.json === undefined ? call.body : { bytes: JSON.stringify(call.json), contentType: 'application/json' };
    const headers: Record<string, string> = {};
    if (body !== undefined) headers['content-type'] = body.contentType;
    if (call.method === 'POST') headers['idempotency-key'] = call.options.idempotencyKey ?? crypto.randomUUID();
    return this.#transport.send({
      method: call.method,
      url,
      body: body?.bytes,
      headers,
      signal: call.options.signal,
      accept: call.accept,
      what: call.what,
    });
  }
}

/** An id as one path segment, whatever it holds. */
const segment = (id: string): string => encodeURIComponent(id);

const isObject = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null;
const hasStrings = (value: unknown, ...names: string[]): boolean =>
  isObject(value) && names.every((name) => typeof value[name] === 'string');

/** Enough of each shape to be sure of the answer; the server validates the rest against the schema the types come from. */
const isUser = (value: unknown): value is AdminUser => hasStrings(value, 'id', 'email', 'plan');
const isUserList = (value: unknown): value is { data: AdminUser[] } =>
  isObject(value) && Array.isArray(value.data) && value.data.every(isUser);
const isCreatedKey = (value: unknown): value is CreatedKey => hasStrings(value, 'id', 'key', 'start');
const isRotatedKey = (value: unknown): value is RotatedKey => isCreatedKey(value) && hasStrings(value, 'replaces');
const isKeyList = (value: unknown): value is { data: ListedKey[] } =>
  isObject(value) && Array.isArray(value.data) && value.data.every((key) => hasStrings(key, 'id', 'status'));
/** The import's query: `match` as the server takes it (comma-separated, or `none`), or the older `match_email`. */
function importQuery({ match, matchEmail }: ImportOptions): Record<string, string> | undefined {
  if (match !== undefined) return { match: match.length === 0 ? 'none' : match.join(',') };
  return matchEmail === undefined ? undefined : { match_email: String(matchEmail) };
}

const isImportSummary = (value: unknown): value is ImportSummary =>
  isObject(value) && ['imported', 'created', 'updated', 'unchanged'].every((name) => Number.isInteger(value[name]));
const isMerged = (value: unknown): value is MergedContact => hasStrings(value, 'merged', 'into');
const isWebhook = (value: unknown): value is Webhook => hasStrings(value, 'id', 'url', 'status');
const isCreatedWebhook = (value: unknown): value is CreatedWebhook => isWebhook(value) && hasStrings(value, 'secret');
const isWebhookList = (value: unknown): value is { data: Webhook[] } =>
  isObject(value) && Array.isArray(value.data) && value.data.every(isWebhook);
const isRotatedSecret = (value: unknown): value is RotatedWebhookSecret => hasStrings(value, 'secret');
const isDeliveryList = (value: unknown): value is { data: WebhookDelivery[] } =>
  isObject(value) && Array.isArray(value.data) && value.data.every((delivery) => hasStrings(delivery, 'event_id', 'type'));
/** A 204's empty body. */
const isEmpty = (value: unknown): value is undefined => value === undefined;
