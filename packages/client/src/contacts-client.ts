import { ApiTransport, parseBaseUrl, type TransportOptions } from './api-transport.js';
import { walkContacts } from './contact-walk.js';
import { SyncExpiredError } from './errors.js';
import type { Change, ChangesResponse, Contact, ContactListResponse, Pagination } from './types.js';

const CONTACTS_PATH = 'api/v1/contacts';
const CHANGES_PATH = 'api/v1/contacts/changes';
/** `since=0`: every contact as an upsert, then the changes made meanwhile. */
export const SINCE_BEGINNING = '0';

/** Options of a ContactsClient. Only `baseUrl` and `apiKey` are required. */
export interface ContactsClientOptions extends TransportOptions {
  /** Where the API is served, e.g. `https://contacts.example.com` (a path prefix is kept). */
  baseUrl: string | URL;
  /** A personal API key with the `contacts:read` scope, sent as `Authorization: Bearer <key>`. */
  apiKey: string;
}

/** Parameters of one `listContacts` call. */
export interface ListContactsParams {
  /** Page size, 1–100; the server's default is 50. */
  limit?: number;
  /** Contacts to skip; default 0. */
  offset?: number;
  /** Cancels the call, including any wait before a retry. */
  signal?: AbortSignal;
}

/** Parameters of one `listChanges` call. */
export interface ListChangesParams {
  /**
   * A `next_since` the API returned, or `SINCE_BEGINNING` (`'0'`) to start from nothing: every contact as an upsert,
   * then the changes made meanwhile. Without it, the answer is the current position and no changes.
   */
  since?: string;
  /** Most changes in the answer, 1–1000; the server's default is 100. */
  limit?: number;
  signal?: AbortSignal;
}

/** The changes after a token; iterate it to the end, then read `nextSince`. */
export interface ChangeFeed extends AsyncIterable<Change> {
  nextSince: string;
}

/** Options of a `contacts()` walk. */
export interface ContactsWalkOptions {
  /** Rows per request, 2–100 (a few of each page repeat the previous one's end, to detect shifts). Default 100. */
  pageSize?: number;
  /** Cancels the walk, including any request in flight and any wait before a retry. */
  signal?: AbortSignal;
  /** Called with the pagination of every page fetched; `total` is the current number of contacts. */
  onPage?: (pagination: Pagination) => void;
}

/**
 * A typed client of the Contacts Read API, on Node's built-in `fetch`.
 *
 * @example
 * const client = new ContactsClient({ baseUrl: 'https://contacts.example.com', apiKey: process.env.CONTACTS_API_KEY! });
 * const page = await client.listContacts({ limit: 10 });
 * for await (const contact of client.contacts()) console.log(contact.name);
 */
export class ContactsClient {
  readonly #contactsUrl: URL;
  readonly #changesUrl: URL;
  readonly #transport: ApiTransport;

  constructor(options: ContactsClientOptions) {
    if (typeof options !== 'object' || options === null) {
      throw new TypeError('ContactsClient: options are required: { baseUrl, apiKey }');
    }
    const base = parseBaseUrl('ContactsClient', options.baseUrl);
    this.#contactsUrl = new URL(CONTACTS_PATH, base);
    this.#changesUrl = new URL(CHANGES_PATH, base);
    if (typeof options.apiKey !== 'string' || options.apiKey.trim() === '') {
      throw new TypeError('ContactsClient: apiKey is required (a personal API key with the contacts:read scope)');
    }
    this.#transport = new ApiTransport(`Bearer ${options.apiKey}`, options);
  }

  /**
   * One page of contacts (`GET /api/v1/contacts`). Retries transient failures; throws a ContactsApiError
   * subclass when the call fails, or the signal's reason when it is aborted.
   */
  async listContacts(params: ListContactsParams = {}): Promise<ContactListResponse> {
    const url = new URL(this.#contactsUrl);
    if (params.limit !== undefined) url.searchParams.set('limit', String(params.limit));
    if (params.offset !== undefined) url.searchParams.set('offset', String(params.offset));
    return this.#transport.send({ method: 'GET', url, signal: params.signal, accept: isPage, what: 'a page of contacts' });
  }

  /**
   * One answer of the change feed (`GET /api/v1/contacts/changes`): without `since`, the current position and no
   * changes. Retries like `listContacts`; a token past the server's retention throws SyncExpiredError.
   */
  async listChanges(params: ListChangesParams = {}): Promise<ChangesResponse> {
    const url = new URL(this.#changesUrl);
    if (params.since !== undefined) url.searchParams.set('since', params.since);
    if (params.limit !== undefined) url.searchParams.set('limit', String(params.limit));
    return this.#transport.send({ method: 'GET', url, signal: params.signal, accept: isChanges, what: 'an answer of the change feed' });
  }

  /**
   * Every change after `since`, oldest first, following `has_more`. Once iterated to the end, `nextSince` is the
   * token to pass next time.
   *
   * @example
   * const feed = client.changes(token);
   * for await (const change of feed) apply(change);
   * token = feed.nextSince;
   */
  changes(since: string, options: { limit?: number; signal?: AbortSignal } = {}): ChangeFeed {
    const next = (token: string) => this.listChanges({ since: token, limit: options.limit ?? 1000, signal: options.signal });
    const feed: ChangeFeed = {
      nextSince: since,
      async *[Symbol.asyncIterator]() {
        for (;;) {
          const answer = await next(feed.nextSince);
          yield* answer.data;
          feed.nextSince = answer.next_since;
          if (!answer.has_more) return;
        }
      },
    };
    return feed;
  }

  /**
   * Brings `copy` (contacts by id) up to date and returns the token to pass next time. Without a token (or when the
   * server answers that it expired) it starts over from nothing through the feed itself (`since=0`): every contact,
   * then what changed meanwhile, so nothing written during the walk is missed.
   */
  async mirror(copy: Map<string, Contact>, since: string | null = null, options: { signal?: AbortSignal } = {}): Promise<string> {
    if (since !== null) {
      try {
        return await this.#follow(copy, since, options.signal);
      } catch (error) {
        if (!(error instanceof SyncExpiredError)) throw error;
      }
    }
    copy.clear();
    return this.#follow(copy, SINCE_BEGINNING, options.signal);
  }

  async #follow(copy: Map<string, Contact>, since: string, signal: AbortSignal | undefined): Promise<string> {
    const feed = this.changes(since, { signal });
    for await (const change of feed) {
      if (change.type === 'upsert') copy.set(change.id, change.contact);
      else copy.delete(change.id);
    }
    return feed.nextSince;
  }

  /**
   * Every contact, page by page, each exactly once even while contacts are added or merged during the
   * walk (see walkContacts for how). Each page request retries like `listContacts`.
   */
  contacts(options: ContactsWalkOptions = {}): AsyncGenerator<Contact, void, undefined> {
    const { signal } = options;
    return walkContacts((offset, limit) => this.listContacts({ offset, limit, signal }), {
      pageSize: options.pageSize ?? 100,
      onPage: options.onPage,
    });
  }
}

/** Enough of the shape to page safely; the server validates the rest against the same schema the types come from. */
function isChanges(value: unknown): value is ChangesResponse {
  if (typeof value !== 'object' || value === null) return false;
  const { data, next_since, has_more } = value as Partial<Record<keyof ChangesResponse, unknown>>;
  return (
    Array.isArray(data) &&
    data.every((change) => typeof change?.id === 'string' && ['upsert', 'merge', 'delete'].includes(change?.type)) &&
    typeof next_since === 'string' &&
    typeof has_more === 'boolean'
  );
}

function isPage(value: unknown): value is ContactListResponse {
  if (typeof value !== 'object' || value === null) return false;
  const { data, pagination } = value as { data?: unknown; pagination?: Partial<Record<keyof Pagination, unknown>> };
  return (
    Array.isArray(data) &&
    data.every((contact) => typeof contact?.id === 'string' && typeof contact?.created_at === 'string') &&
    typeof pagination === 'object' &&
    pagination !== null &&
    Number.isInteger(pagination.total) &&
    Number.isInteger(pagination.offset) &&
    (pagination.nextOffset === null || Number.isInteger(pagination.nextOffset))
  );
}
