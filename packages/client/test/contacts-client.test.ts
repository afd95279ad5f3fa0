import { describe, expect, it } from 'vitest';
import {
  AuthenticationError,
  BadRequestError,
  ContactsApiError,
  ContactsClient,
  NetworkError,
  PermissionError,
  RateLimitError,
  ServerError,
  TimeoutError,
  UnexpectedResponseError,
  type ContactsClientOptions,
} from '../src/index.js';

const PAGE = {
  data: [{ id: '0190f3a4-0000-7000-8000-000000000001', name: 'Ada', created_at: '2024-01-01T00:00:00.000Z' }],
  pagination: { limit: 1, offset: 0, total: 1, nextOffset: null },
};

type Reply = Response | Error | ((request: Request) => Promise<Response>);

/** A fetch that answers from a script, one reply per call, recording each request. */
function scriptedFetch(...replies: Reply[]) {
  const requests: Request[] = [];
  const fetch = async (input: string | URL | Request, init?: RequestInit): Promise<Response> => {
    const request = new Request(input, init);
    requests.push(request);
    const reply = replies.shift();
    if (reply === undefined) throw new Error('no scripted reply left');
    if (reply instanceof Error) throw reply;
    return typeof reply === 'function' ? reply(request) : reply;
  };
  return { fetch: fetch as typeof globalThis.fetch, requests };
}

const json = (status: number, body: unknown, headers: Record<string, string> = {}) =>
  new Response(JSON.stringify(body), { status, headers: { 'content-type': 'application/json', ...headers } });

/** A client whose waits are recorded, not slept. */
function clientWith(fetch: typeof globalThis.fetch, options: Partial<ContactsClientOptions> = {}) {
  const sleeps: number[] = [];
  const client = new ContactsClient({
    baseUrl: 'http://api.test',
    apiKey: 'cnt_live_secret',
    fetch,
    random: () => 0.5,
    sleep: async (ms) => void sleeps.push(ms),
    ...options,
  });
  return { client, sleeps };
}

const connectionRefused = () => new TypeError('fetch failed', { cause: new Error('connect ECONNREFUSED 127.0.0.1:9') });

/** A fetch that never answers until its signal aborts, then fails as fetch does. */
const hangingFetch = ((_input: unknown, init?: RequestInit) =>
  new Promise<Response>((_resolve, reject) => {
    init!.signal!.addEventListener('abort', () => reject(init!.signal!.reason));
  })) as typeof globalThis.fetch;

describe('ContactsClient.listContacts', () => {
  it('GETs /api/v1/contacts under the base URL with the key as a Bearer token and returns the typed page', async () => {
    const { fetch, requests } = scriptedFetch(json(200, PAGE));
    const { client } = clientWith(fetch, { baseUrl: 'https://example.test/prefix' });
    const page = await client.listContacts({ limit: 1, offset: 0 });
    expect(page).toEqual(PAGE);
    expect(requests[0]!.method).toBe('GET');
    expect(requests[0]!.url).toBe('https://example.test/prefix/api/v1/contacts?limit=1&offset=0');
    expect(requests[0]!.headers.get('authorization')).toBe('Bearer cnt_live_secret');
    expect(requests[0]!.headers.get('accept')).toBe('application/json');
  });

  it('sends no limit or offset when none is given, so the server applies its defaults', async () => {
    const { fetch, requests } = scriptedFetch(json(200, PAGE));
    await clientWith(fetch).client.listContacts();
    expect(requests[0]!.url).toBe('http://api.test/api/v1/contacts');
  });

  it('refuses a base URL that is not http(s), an empty key and negative settings', () => {
    expect(() => new ContactsClient({ baseUrl: 'ftp://x', apiKey: 'k' })).toThrow(
      'ContactsClient: baseUrl must be an absolute http(s) URL such as https://contacts.example.com; got "ftp://x"',
    );
    expect(() => new ContactsClient({ baseUrl: 'http://x', apiKey: ' ' })).toThrow(
      'ContactsClient: apiKey is required (a personal API key with the contacts:read scope)',
    );
    expect(() => new ContactsClient({ baseUrl: 'http://x', apiKey: 'k', maxRetries: -1 })).toThrow(/maxRetries/);
    expect(() => new ContactsClient({ baseUrl: 'http://x', apiKey: 'k', timeoutMs: 0 })).toThrow(/timeoutMs/);
  });

  it('names the option when apiKey is unset or baseUrl is missing or relative, as a plain JavaScript caller may pass', () => {
    const construct = (options: unknown) => () => new ContactsClient(options as ContactsClientOptions);
    // Before: "Cannot read properties of undefined (reading 'trim')".
    expect(construct({ baseUrl: 'http://x' })).toThrow(/^ContactsClient: apiKey is required/);
    expect(construct({ baseUrl: 'http://x', apiKey: 42 })).toThrow(/^ContactsClient: apiKey is required/);
    expect(construct({ apiKey: 'k' })).toThrow(
      'ContactsClient: baseUrl must be an absolute http(s) URL such as https://contacts.example.com; got "undefined"',
    );
    expect(construct({ baseUrl: '/api', apiKey: 'k' })).toThrow(
      /^ContactsClient: baseUrl must be an absolute http\(s\) URL .*got "\/api"$/,
    );
    expect(construct({ baseUrl: 'localhost:3000', apiKey: 'k' })).toThrow(/^ContactsClient: baseUrl must be/);
    expect(construct(undefined)).toThrow('ContactsClient: options are required: { baseUrl, apiKey }');
    for (const options of [{ baseUrl: 'http://x' }, { apiKey: 'k' }, undefined]) {
      expect(construct(options)).toThrow(TypeError);
    }
  });
});

describe("error mapping: one class per status, carrying the status and the server's error text", () => {
  const cases: [number, string, new (...args: never[]) => ContactsApiError][] = [
    [400, 'Query parameter "limit" must be a base-10 integer from 1 to 100; got "500"', BadRequestError],
    [401, 'Invalid or inactive API key', AuthenticationError],
    [403, 'API key lacks contacts:read', PermissionError],
    [404, 'Route GET:/nope/api/v1/contacts not found', UnexpectedResponseError],
  ];
  for (const [status, text, type] of cases) {
    it(`${status} → ${type.name}, not retried`, async () => {
      const { fetch, requests } = scriptedFetch(json(status, { error: text }));
      const { client, sleeps } = clientWith(fetch);
      const error = await client.listContacts().catch((caught: unknown) => caught);
      expect(error).toBeInstanceOf(type);
      expect(error).toBeInstanceOf(ContactsApiError);
      expect(error).toMatchObject({ status, serverMessage: text, message: `${text} (HTTP ${status})` });
      expect(requests).toHaveLength(1);
      expect(sleeps).toEqual([]);
    });
  }

  it('403 says why: the scope, the plan, or unknown for a text it does not know', async () => {
    const reason = async (text: string) => {
      const { client } = clientWith(scriptedFetch(json(403, { error: text })).fetch);
      return ((await client.listContacts().catch((e: unknown) => e)) as PermissionError).reason;
    };
    expect(await reason('API key lacks contacts:read')).toBe('scope');
    expect(await reason('API access requires a Pro plan')).toBe('plan');
    expect(await reason('Forbidden by policy')).toBe('unknown');
  });

  it('a 5xx without a JSON body is a ServerError named by its status line', async () => {
    const gateway = () => new Response('<html>bad gateway</html>', { status: 502, statusText: 'Bad Gateway' });
    const { client } = clientWith(scriptedFetch(gateway(), gateway()).fetch, { maxRetries: 1 });
    const error = await client.listContacts().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ServerError);
    expect(error).toMatchObject({ status: 502, serverMessage: undefined, message: 'Bad Gateway (HTTP 502)' });
  });

  it('a 200 whose body is not a page is an UnexpectedResponseError, not retried', async () => {
    const { fetch, requests } = scriptedFetch(json(200, { contacts: [] }));
    const error = await clientWith(fetch)
      .client.listContacts()
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(UnexpectedResponseError);
    expect(requests).toHaveLength(1);
  });
});

describe('retries with jittered exponential backoff', () => {
  it('retries 429, 5xx and network errors, then returns the page', async () => {
    const { fetch, requests } = scriptedFetch(
      json(429, { error: 'Too many requests' }),
      json(500, { error: 'Internal server error' }),
      connectionRefused(),
      json(503, { error: 'Service unavailable' }),
      json(200, PAGE),
    );
    const { client, sleeps } = clientWith(fetch);
    expect(await client.listContacts()).toEqual(PAGE);
    expect(requests).toHaveLength(5);
    // random() = 0.5: three quarters of each doubling step of 500 ms.
    expect(sleeps).toEqual([375, 750, 1500, 3000]);
  });

  it('jitter stays in the upper half of each step, and steps are capped by maxRetryDelayMs', async () => {
    const failures = () => Array.from({ length: 5 }, () => json(500, { error: 'x' }));
    const low = clientWith(scriptedFetch(...failures()).fetch, { random: () => 0, maxRetryDelayMs: 1000 });
    const high = clientWith(scriptedFetch(...failures()).fetch, { random: () => 0.999, maxRetryDelayMs: 1000 });
    await expect(low.client.listContacts()).rejects.toBeInstanceOf(ServerError);
    await expect(high.client.listContacts()).rejects.toBeInstanceOf(ServerError);
    expect(low.sleeps).toEqual([250, 500, 500, 500]);
    expect(high.sleeps.map(Math.round)).toEqual([500, 1000, 1000, 1000]);
  });

  it('gives up after maxRetries with the last error', async () => {
    const { fetch, requests } = scriptedFetch(json(500, { error: 'first' }), json(500, { error: 'second' }), json(500, { error: 'third' }));
    const error = await clientWith(fetch, { maxRetries: 2 })
      .client.listContacts()
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ServerError);
    expect(error).toMatchObject({ status: 500, serverMessage: 'third' });
    expect(requests).toHaveLength(3);
  });

  it('maxRetries 0 makes one attempt', async () => {
    const { fetch, requests } = scriptedFetch(json(503, { error: 'busy' }));
    await expect(clientWith(fetch, { maxRetries: 0 }).client.listContacts()).rejects.toBeInstanceOf(ServerError);
    expect(requests).toHaveLength(1);
  });

  it('a network failure that outlasts the retries is a NetworkError naming the cause', async () => {
    const { fetch } = scriptedFetch(connectionRefused(), connectionRefused());
    const error = await clientWith(fetch, { maxRetries: 1 })
      .client.listContacts()
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(NetworkError);
    expect(error).toMatchObject({ status: undefined, message: 'cannot reach http://api.test: connect ECONNREFUSED 127.0.0.1:9' });
  });
});

describe('Retry-After', () => {
  it('waits the seconds a 429 or 503 asks for instead of the backoff', async () => {
    const { fetch } = scriptedFetch(
      json(429, { error: 'slow down' }, { 'retry-after': '3' }),
      json(503, { error: 'busy' }, { 'retry-after': '0' }),
      json(200, PAGE),
    );
    const { client, sleeps } = clientWith(fetch);
    await client.listContacts();
    expect(sleeps).toEqual([3000, 0]);
  });

  it('reads an HTTP date as the time left until then', async () => {
    const at = new Date(Date.now() + 10_000).toUTCString();
    const { fetch } = scriptedFetch(json(429, { error: 'slow down' }, { 'retry-after': at }), json(200, PAGE));
    const { client, sleeps } = clientWith(fetch);
    await client.listContacts();
    // An HTTP date has whole seconds, so up to one second of the ten is lost to rounding down.
    expect(sleeps[0]).toBeGreaterThan(8_000);
    expect(sleeps[0]).toBeLessThanOrEqual(10_000);
  });

  it('an unreadable Retry-After falls back to the backoff', async () => {
    const { fetch } = scriptedFetch(json(429, { error: 'slow down' }, { 'retry-after': 'soon' }), json(200, PAGE));
    const { client, sleeps } = clientWith(fetch);
    await client.listContacts();
    expect(sleeps).toEqual([375]);
  });

  it('longer than maxRetryDelayMs fails at once with a RateLimitError saying how long the server asked for', async () => {
    const { fetch, requests } = scriptedFetch(json(429, { error: 'Too many requests' }, { 'retry-after': '120' }));
    const { client, sleeps } = clientWith(fetch, { maxRetryDelayMs: 60_000 });
    const error = await client.listContacts().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(RateLimitError);
    expect(error).toMatchObject({ status: 429, retryAfterMs: 120_000, serverMessage: 'Too many requests' });
    expect(requests).toHaveLength(1);
    expect(sleeps).toEqual([]);
  });
});

describe('per-request timeout', () => {
  it('an attempt without a response within timeoutMs is a TimeoutError, retried like a network error', async () => {
    let calls = 0;
    const fetch = ((input: string | URL | Request, init?: RequestInit) => {
      calls += 1;
      return hangingFetch(input, init);
    }) as typeof globalThis.fetch;
    const error = await clientWith(fetch, { timeoutMs: 5, maxRetries: 1 })
      .client.listContacts()
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(TimeoutError);
    expect(error).toBeInstanceOf(NetworkError);
    expect((error as Error).message).toBe('no complete response from http://api.test within 5 ms');
    expect(calls).toBe(2);
  });

  it('covers the body too: headers in time but a body that stalls still time out', async () => {
    const stalledBody = (request: Request) => {
      const body = new ReadableStream({
        start(controller) {
          controller.enqueue(new TextEncoder().encode('{"data":['));
          request.signal.addEventListener('abort', () => controller.error(request.signal.reason));
        },
      });
      return Promise.resolve(new Response(body, { status: 200 }));
    };
    const { fetch } = scriptedFetch(stalledBody);
    const error = await clientWith(fetch, { timeoutMs: 5, maxRetries: 0 })
      .client.listContacts()
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(TimeoutError);
  });
});

describe('AbortSignal cancels everything', () => {
  it('an already aborted signal makes no request', async () => {
    const { fetch, requests } = scriptedFetch(json(200, PAGE));
    const reason = new Error('stop');
    await expect(clientWith(fetch).client.listContacts({ signal: AbortSignal.abort(reason) })).rejects.toBe(reason);
    expect(requests).toHaveLength(0);
  });

  it("aborting during a request rejects with the signal's reason and does not retry", async () => {
    let calls = 0;
    const controller = new AbortController();
    const fetch = ((input: string | URL | Request, init?: RequestInit) => {
      calls += 1;
      queueMicrotask(() => controller.abort());
      return hangingFetch(input, init);
    }) as typeof globalThis.fetch;
    const error = await clientWith(fetch)
      .client.listContacts({ signal: controller.signal })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(DOMException);
    expect((error as DOMException).name).toBe('AbortError');
    expect(calls).toBe(1);
  });

  it('aborting during the wait before a retry ends the wait at once (the real sleep, a one-hour backoff)', async () => {
    const controller = new AbortController();
    const { fetch, requests } = scriptedFetch(json(503, { error: 'busy' }, { 'retry-after': '3600' }), json(200, PAGE));
    const client = new ContactsClient({ baseUrl: 'http://api.test', apiKey: 'k', fetch, maxRetryDelayMs: 7_200_000 });
    const pending = client.listContacts({ signal: controller.signal });
    setTimeout(() => controller.abort(new Error('user pressed Ctrl-C')), 1);
    await expect(pending).rejects.toThrow('user pressed Ctrl-C');
    expect(requests).toHaveLength(1);
  });

  it('a walk stops when its signal aborts between pages', async () => {
    const controller = new AbortController();
    const first = { data: PAGE.data, pagination: { limit: 2, offset: 0, total: 5, nextOffset: 1 } };
    const { fetch, requests } = scriptedFetch(json(200, first), json(200, first));
    const { client } = clientWith(fetch);
    const seen: string[] = [];
    const walk = async () => {
      for await (const contact of client.contacts({ pageSize: 2, signal: controller.signal })) {
        seen.push(contact.id);
        controller.abort(new Error('enough'));
      }
    };
    await expect(walk()).rejects.toThrow('enough');
    expect(seen).toEqual([PAGE.data[0]!.id]);
    expect(requests).toHaveLength(1);
  });
});
