import { setImmediate as nextTurn } from 'node:timers/promises';
import { Agent, type Dispatcher } from 'undici';
import { checkWebhookUrl } from '../domain/webhook-url.js';
import { lookupPublicOnly } from '../net/public-lookup.js';

/** What the receiver's answer is read up to; the rest is dropped with the connection. */
export const RESPONSE_BODY_LIMIT = 64 * 1024;
/** How much of a refusal's body, or an error's message, an attempt keeps (the deliveries list shows it). */
const ERROR_TEXT_LIMIT = 200;
const USER_AGENT = 'contacts-read-api-webhooks/1';
/** Errors of a connection the receiver closed as the request went out. */
const CLOSED_UNDER_REQUEST = new Set(['UND_ERR_SOCKET', 'ECONNRESET', 'EPIPE']);

/** One event to POST: the endpoint's URL, the Standard Webhooks headers, and the JSON body they sign. */
export interface WebhookAttempt {
  url: string;
  eventId: string;
  /** Seconds since the epoch, as signed. */
  timestamp: number;
  signature: string;
  body: string;
}

/** How one attempt went: the receiver's status (null when none came) and, unless it was a 2xx, why it failed. */
export interface AttemptOutcome {
  statusCode: number | null;
  error: string | null;
  durationMs: number;
  /** What failed, for the metrics: null for a 2xx. */
  failure: 'http_error' | 'timeout' | 'connection_error' | null;
}

export interface SenderOptions {
  /** WEBHOOKS_ALLOW_PRIVATE_URLS: plain http, and loopback or private addresses, may be delivered to. */
  allowPrivate: boolean;
  /** WEBHOOK_TIMEOUT_MS: one whole attempt, from connecting to the answer's end. */
  timeoutMs: number;
}

export interface WebhookSender {
  /** POSTs one event; never rejects (every failure is an outcome). `signal` aborts it (shutdown). */
  send(attempt: WebhookAttempt, signal?: AbortSignal): Promise<AttemptOutcome>;
  /** Closes the kept-alive connections. */
  close(): void;
}

type Answer = Omit<AttemptOutcome, 'durationMs'>;

/** Text safe to keep and show: one line, printable, at most ERROR_TEXT_LIMIT characters. */
const shortText = (text: string) =>
  text
    // eslint-disable-next-line no-control-regex
    .replace(/[\u0000-\u001f\u007f]+/g, ' ')
    .trim()
    .slice(0, ERROR_TEXT_LIMIT);

/** A receiver's answer: a 2xx is a success, anything else (a redirect too: none is followed) a failure. */
function answered(status: number, text: string): Answer {
  if (status >= 200 && status < 300) return { statusCode: status, error: null, failure: null };
  const why = status >= 300 && status < 400 ? 'redirects are not followed' : shortText(text);
  return { statusCode: status, error: why === '' ? `HTTP ${status}` : `HTTP ${status}: ${why}`, failure: 'http_error' };
}

/**
 * The start of an answer's body, for a refusal's text. Past RESPONSE_BODY_LIMIT the rest is not read: the connection
 * goes, and the answer stands as it is; so does one whose body fails midway.
 */
async function readBounded(body: Dispatcher.ResponseData['body']): Promise<string> {
  const chunks: Buffer[] = [];
  let length = 0;
  try {
    for await (const chunk of body as AsyncIterable<Buffer>) {
      if (length < ERROR_TEXT_LIMIT * 4) chunks.push(chunk);
      length += chunk.length;
      if (length > RESPONSE_BODY_LIMIT) {
        body.destroy();
        break;
      }
    }
  } catch {
    // The status came: it stands, with what text arrived.
  }
  return Buffer.concat(chunks).toString('utf8');
}

/**
 * A kept-alive connection the receiver closed as this request went out (it had carried an answer before): sent once
 * more, on a new connection. The receiver may have had it: a duplicate, as a retry would send.
 */
function closedUnderReusedConnection(error: unknown): boolean {
  const { code, socket } = error as { code?: string; socket?: { bytesRead?: number } };
  return code !== undefined && CLOSED_UNDER_REQUEST.has(code) && (socket?.bytesRead ?? 0) > 0;
}

/**
 * Delivers webhook attempts with undici: over keep-alive connections (one pool per origin, per process), to addresses
 * checked when each connection is made (lookupPublicOnly: every address a name resolves to must be public, and the
 * socket goes to the address checked), never following a redirect, reading at most RESPONSE_BODY_LIMIT of an answer. A
 * pooled connection was checked when it was made.
 */
export function createWebhookSender(options: SenderOptions): WebhookSender {
  const agent = new Agent({
    // No cap per origin: the dispatcher's lanes bound the attempts in flight, and a queue here would put one owner's
    // endpoints behind another's dead ones on a host they share.
    connections: null,
    // One clock per attempt (WEBHOOK_TIMEOUT_MS, below) covers connecting, the headers and the body.
    connectTimeout: 0,
    headersTimeout: 0,
    bodyTimeout: 0,
    connect: options.allowPrivate ? {} : { lookup: lookupPublicOnly },
  });

  const post = async (url: URL, attempt: WebhookAttempt, signal: AbortSignal, status: { code: number | null }): Promise<Answer> => {
    const body = Buffer.from(attempt.body);
    for (let again = false; ; again = true) {
      try {
        const response = await agent.request({
          origin: url.origin,
          path: `${url.pathname}${url.search}`,
          method: 'POST',
          headers: {
            'content-type': 'application/json',
            'content-length': String(body.length),
            'user-agent': USER_AGENT,
            'webhook-id': attempt.eventId,
            'webhook-timestamp': String(attempt.timestamp),
            'webhook-signature': attempt.signature,
          },
          body,
          signal,
        });
        status.code = response.statusCode;
        return answered(response.statusCode, await readBounded(response.body));
      } catch (error) {
        if (!again && !signal.aborted && closedUnderReusedConnection(error)) continue;
        const { message, code } = error as { message?: string; code?: unknown };
        return { statusCode: null, error: shortText(message || String(code)), failure: 'connection_error' };
      }
    }
  };

  const send = async (attempt: WebhookAttempt, shutdown?: AbortSignal): Promise<AttemptOutcome> => {
    const started = performance.now();
    const elapsed = () => Math.round(performance.now() - started);
    let url: URL;
    try {
      // Checked again at each attempt: a URL stored before a rule changed, or an address literal, connects nowhere else.
      checkWebhookUrl(attempt.url, { allowPrivate: options.allowPrivate });
      url = new URL(attempt.url);
    } catch (error) {
      return { statusCode: null, error: shortText((error as Error).message), durationMs: elapsed(), failure: 'connection_error' };
    }
    const aborter = new AbortController();
    const abort = () => aborter.abort();
    if (shutdown?.aborted) abort();
    shutdown?.addEventListener('abort', abort, { once: true });
    const status: { code: number | null } = { code: null };
    let timer: NodeJS.Timeout | undefined;
    const timedOut = new Promise<Answer>((resolve) => {
      timer = setTimeout(() => {
        // An answer whose status came already stands, whatever happens to its body.
        resolve(
          status.code !== null
            ? answered(status.code, '')
            : { statusCode: null, error: `timed out after ${options.timeoutMs} ms`, failure: 'timeout' },
        );
        abort();
      }, options.timeoutMs);
    });
    let outcome: AttemptOutcome;
    try {
      outcome = { ...(await Promise.race([post(url, attempt, aborter.signal, status), timedOut])), durationMs: elapsed() };
    } finally {
      clearTimeout(timer);
      shutdown?.removeEventListener('abort', abort);
    }
    // undici gives a connection back to its pool one turn of the event loop after the answer's end (a server that
    // closes it despite keep-alive is seen first): the next attempt to the endpoint, sent as this one settles, reuses it.
    await nextTurn();
    return outcome;
  };

  return { send, close: () => void agent.destroy() };
}
