import { walkContacts } from './contact-walk.js';
import { NetworkError, SyncExpiredError, TimeoutError, UnexpectedResponseError, errorForResponse } from './errors.js';
import { abortableSleep, parseRetryAfter, retryDelay, type RetryPolicy } from './retry-policy.js';
import type { Change, ChangesResponse, Contact, ContactListResponse, Pagination } from './types.js';

const CONTACTS_PATH = 'api/v1/contacts';
const CHANGES_PATH = 'api/v1/contacts/changes';
/** `since=0`: every contact as an upsert, then the changes made meanwhile. */
export const SINCE_BEGINNING = '0';

/** Options of a ContactsClient. Only `baseUrl` and `apiKey` are required. */
export interface ContactsClientOptions {
  /** Where the API is served, e.g. `https://contacts.example.com` (a path prefix is kept). */
  baseUrl: string | URL;
  /** A personal API key with the `contacts:read` scope, sent as `Authorization: Bearer <key>`. */
  apiKey: string;
  /** Per-attempt limit for the whole response, headers and body. Default 30 000. */
  timeoutMs?: number;
  /** Retries after the first attempt on 429, 5xx, network errors and timeouts. Default 4; 0 disables retries. */
  maxRetries?: number;
  /** Upper bound of the first backoff delay, doubling with every retry. Default 500. */
  initialRetryDelayMs?: number;
  /**
   * Cap on every wait between attempts. A `Retry-After` longer than this fails the call at once with the
   * error (its `retryAfterMs` says how long the server asked for) rather than retrying early. Default 60 000:
   * the server's rate-limit window is a minute.
   */
  maxRetryDelayMs?: number;
  /** The `fetch` to use. Default: the global one. */
  fetch?: typeof fetch;
  /** Waits between attempts; must reject with `signal.reason` when the signal aborts. For tests and custom schedulers. */
  sleep?: (ms: number, signal?: AbortSignal) => Promise<void>;
  /** A number in [0, 1) for the backoff jitter. Default Math.random. */
  random?: () => number;
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
  readonly #authorization: string;
  readonly #timeoutMs: number;
  readonly #retry: RetryPolicy;
  readonly #fetch: typeof fetch;
  readonly #sleep: (ms: number, signal?: AbortSignal) => Promise<void>;

  constructor(options: ContactsClientOptions) {
    if (typeof options !== 'object' || options === null) {
      throw new TypeError('ContactsClient: options are required: { baseUrl, apiKey }');
    }
    const base = parseBaseUrl(options.baseUrl);
    if (!base.pathname.endsWith('/')) base.pathname += '/';
    this.#contactsUrl = new URL(CONTACTS_PATH, `${base.origin}${base.pathname}`);
    this.#changesUrl = new URL(CHANGES_PATH, `${base.origin}${base.pathname}`);
    if (typeof options.apiKey !== 'string' || options.apiKey.trim() === '') {
      throw new TypeError('ContactsClient: apiKey is required (a personal API key with the contacts:read scope)');
    }
    this.#authorization = `Bearer ${options.apiKey}`;
    this.#timeoutMs = nonNegative('timeoutMs', options.timeoutMs ?? 30_000);
    if (this.#timeoutMs === 0) throw new RangeError('timeoutMs must be more than 0');
    this.#retry = {
      maxRetries: nonNegative('maxRetries', options.maxRetries ?? 4),
      initialDelayMs: nonNegative('initialRetryDelayMs', options.initialRetryDelayMs ?? 500),
      maxDelayMs: nonNegative('maxRetryDelayMs', options.maxRetryDelayMs ?? 60_000),
      random: options.random ?? Math.random,
    };
    this.#fetch = options.fetch ?? globalThis.fetch;
    this.#sleep = options.sleep ?? abortableSleep;
  }

  /**
   * One page of contacts (`GET /api/v1/contacts`). Retries transient failures; throws a ContactsApiError
   * subclass when the call fails, or the signal's reason when it is aborted.
   */
  async listContacts(params: ListContactsParams = {}): Promise<ContactListResponse> {
    const url = new URL(this.#contactsUrl);
    if (params.limit !== undefined) url.searchParams.set('limit', String(params.limit));
    if (params.offset !== undefined) url.searchParams.set('offset', String(params.offset));
    return this.#getWithRetries(url, params.signal, isPage, 'a page of contacts');
  }

  /**
   * One answer of the change feed (`GET /api/v1/contacts/changes`): without `since`, the current position and no
   * changes. Retries like `listContacts`; a token past the server's retention throws SyncExpiredError.
   */
  async listChanges(params: ListChangesParams = {}): Promise<ChangesResponse> {
    const url = new URL(this.#changesUrl);
    if (params.since !== undefined) url.searchParams.set('since', params.since);
    if (params.limit !== undefined) url.searchParams.set('limit', String(params.limit));
    return this.#getWithRetries(url, params.signal, isChanges, 'an answer of the change feed');
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

  async #getWithRetries<T>(url: URL, signal: AbortSignal | undefined, accept: (json: unknown) => json is T, what: string): Promise<T> {
    for (let retry = 0; ; retry++) {
      signal?.throwIfAborted();
      try {
        return await this.#get(url, signal, accept, what);
      } catch (error) {
        if (signal?.aborted) throw signal.reason;
        const delay = retryDelay(this.#retry, error, retry);
        if (delay === undefined) throw error;
        await this.#sleep(delay, signal);
      }
    }
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

  /** One attempt: the response within the timeout, mapped to its body or to the error its status means. */
  async #get<T>(url: URL, signal: AbortSignal | undefined, accept: (json: unknown) => json is T, what: string): Promise<T> {
    const attempt = new AbortController();
    const cancel = () => attempt.abort(signal!.reason);
    signal?.addEventListener('abort', cancel, { once: true });
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      attempt.abort();
    }, this.#timeoutMs);
    let response: Response;
    let body: string;
    try {
      response = await this.#fetch(url, {
        headers: { authorization: this.#authorization, accept: 'application/json' },
        signal: attempt.signal,
      });
      body = await response.text();
    } catch (error) {
      if (signal?.aborted) throw signal.reason;
      if (timedOut) {
        throw new TimeoutError(`no complete response from ${url.origin} within ${this.#timeoutMs} ms`, { cause: error });
      }
      throw new NetworkError(`cannot reach ${url.origin}: ${describeCause(error)}`, { cause: error });
    } finally {
      clearTimeout(timer);
      signal?.removeEventListener('abort', cancel);
    }
    const json = parseJson(body);
    if (!response.ok) {
      const serverMessage = isErrorBody(json) ? json.error : undefined;
      throw errorForResponse(response.status, response.statusText, serverMessage, parseRetryAfter(response.headers.get('retry-after')));
    }
    if (!accept(json)) {
      throw new UnexpectedResponseError(`the response to GET ${url.pathname} is not ${what} (HTTP ${response.status})`, {
        status: response.status,
      });
    }
    return json;
  }
}

function nonNegative(name: string, value: number): number {
  if (!Number.isFinite(value) || value < 0) throw new RangeError(`${name} must be a finite number >= 0; got ${value}`);
  return value;
}

/** fetch's own message is a bare "fetch failed"; the reason is in its cause. */
function describeCause(error: unknown): string {
  const cause = error instanceof Error && error.cause instanceof Error ? error.cause : error;
  return cause instanceof Error ? cause.message : String(cause);
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}

function isErrorBody(value: unknown): value is { error: string } {
  return typeof value === 'object' && value !== null && typeof (value as { error?: unknown }).error === 'string';
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

/** The base URL as a URL, or a TypeError that names the option and shows what was given. */
function parseBaseUrl(value: unknown): URL {
  const problem = `ContactsClient: baseUrl must be an absolute http(s) URL such as https://contacts.example.com; got ${JSON.stringify(String(value))}`;
  if (typeof value !== 'string' && !(value instanceof URL)) throw new TypeError(problem);
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new TypeError(problem);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new TypeError(problem);
  return url;
}
