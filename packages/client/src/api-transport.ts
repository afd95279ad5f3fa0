import { NetworkError, TimeoutError, UnexpectedResponseError, errorForResponse, type StatusErrors } from './errors.js';
import { abortableSleep, parseRetryAfter, retryDelay, type RetryPolicy } from './retry-policy.js';

/** How a client talks to its API: the options every client of this package takes besides its URL and credential. */
export interface TransportOptions {
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

/** One call: its request, and what its success must look like. */
export interface ApiCall<T> {
  method: 'GET' | 'POST' | 'PATCH' | 'DELETE';
  url: URL;
  /** Sent again as it is on every attempt, so never a one-shot stream. */
  body?: string | Uint8Array | Blob;
  headers?: Record<string, string>;
  signal?: AbortSignal;
  /** Whether the parsed body (undefined when empty or not JSON) is the success expected. */
  accept: (json: unknown) => json is T;
  /** The success in words, for the error when `accept` refuses it: `a page of contacts`. */
  what: string;
}

/**
 * Sends calls with the retry policy of retry-policy.ts: every attempt within the timeout, its answer mapped to its
 * body or to the error class its status means (`statusErrors` adds a client's own classes).
 */
export class ApiTransport {
  readonly #authorization: string;
  readonly #timeoutMs: number;
  readonly #retry: RetryPolicy;
  readonly #fetch: typeof fetch;
  readonly #sleep: (ms: number, signal?: AbortSignal) => Promise<void>;
  readonly #statusErrors: StatusErrors;

  constructor(authorization: string, options: TransportOptions, statusErrors: StatusErrors = {}) {
    this.#authorization = authorization;
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
    this.#statusErrors = statusErrors;
  }

  /** The call's success; retries transient failures, throws a ContactsApiError subclass, or the signal's reason. */
  async send<T>(call: ApiCall<T>): Promise<T> {
    const { signal } = call;
    for (let retry = 0; ; retry++) {
      signal?.throwIfAborted();
      try {
        return await this.#attempt(call);
      } catch (error) {
        if (signal?.aborted) throw signal.reason;
        const delay = retryDelay(this.#retry, error, retry);
        if (delay === undefined) throw error;
        await this.#sleep(delay, signal);
      }
    }
  }

  /** One attempt: the response within the timeout, mapped to its body or to the error its status means. */
  async #attempt<T>(call: ApiCall<T>): Promise<T> {
    const { url, signal } = call;
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
        method: call.method,
        headers: { authorization: this.#authorization, accept: 'application/json', ...call.headers },
        // fetch takes every Uint8Array; TypeScript's DOM types name only those over an ArrayBuffer.
        body: call.body as RequestInit['body'],
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
      const retryAfterMs = parseRetryAfter(response.headers.get('retry-after'));
      throw errorForResponse(response.status, response.statusText, serverMessage, retryAfterMs, this.#statusErrors);
    }
    if (!call.accept(json)) {
      throw new UnexpectedResponseError(`the response to ${call.method} ${url.pathname} is not ${call.what} (HTTP ${response.status})`, {
        status: response.status,
      });
    }
    return json;
  }
}

/**
 * The base URL as a URL ending in `/`, so that a path prefix is kept, or a TypeError that names the client and the
 * option and shows what was given.
 */
export function parseBaseUrl(client: string, value: unknown): URL {
  const problem = `${client}: baseUrl must be an absolute http(s) URL such as https://contacts.example.com; got ${JSON.stringify(String(value))}`;
  if (typeof value !== 'string' && !(value instanceof URL)) throw new TypeError(problem);
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new TypeError(problem);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new TypeError(problem);
  if (!url.pathname.endsWith('/')) url.pathname += '/';
  return url;
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
