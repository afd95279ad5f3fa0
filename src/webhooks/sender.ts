import { Agent as HttpAgent, request as httpRequest, type ClientRequest, type IncomingMessage } from 'node:http';
import { Agent as HttpsAgent, request as httpsRequest } from 'node:https';
import { checkWebhookUrl } from '../domain/webhook-url.js';
import { lookupPublicOnly } from '../net/public-lookup.js';

/** What the receiver's answer is read up to; the rest is dropped with the connection. */
export const RESPONSE_BODY_LIMIT = 64 * 1024;
/** How much of a refusal's body, or an error's message, an attempt keeps (the deliveries list shows it). */
const ERROR_TEXT_LIMIT = 200;
const USER_AGENT = 'contacts-read-api-webhooks/1';

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

/** Text safe to keep and show: one line, printable, at most ERROR_TEXT_LIMIT characters. */
const shortText = (text: string) =>
  text
    // eslint-disable-next-line no-control-regex
    .replace(/[\u0000-\u001f\u007f]+/g, ' ')
    .trim()
    .slice(0, ERROR_TEXT_LIMIT);

/**
 * Delivers webhook attempts: over keep-alive connections (one pool per process), to addresses checked when each
 * connection is made (lookupPublicOnly: every address a name resolves to must be public, and the socket goes to the
 * address checked), never following a redirect, reading at most RESPONSE_BODY_LIMIT of an answer. A pooled connection
 * was checked when it was made.
 */
export function createWebhookSender(options: SenderOptions): WebhookSender {
  // No cap per host: the dispatcher's lanes bound the attempts in flight, and a queue here would put one owner's
  // endpoints behind another's dead ones on a host they share.
  const agentOptions = { keepAlive: true, scheduling: 'lifo' as const };
  const https = new HttpsAgent(agentOptions);
  const http = new HttpAgent(agentOptions);

  const send = (attempt: WebhookAttempt, signal?: AbortSignal): Promise<AttemptOutcome> => {
    const started = performance.now();
    const elapsed = () => Math.round(performance.now() - started);
    let url: URL;
    try {
      // Checked again at each attempt: a URL stored before a rule changed, or an address literal, connects nowhere else.
      checkWebhookUrl(attempt.url, { allowPrivate: options.allowPrivate });
      url = new URL(attempt.url);
    } catch (error) {
      return Promise.resolve({
        statusCode: null,
        error: shortText((error as Error).message),
        durationMs: elapsed(),
        failure: 'connection_error',
      });
    }
    const secure = url.protocol === 'https:';
    const body = Buffer.from(attempt.body);
    return new Promise((settle) => {
      let settled = false;
      const finish = (outcome: Omit<AttemptOutcome, 'durationMs'>) => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        settle({ ...outcome, durationMs: elapsed() });
      };
      let response: IncomingMessage | null = null;
      const fail = (error: Error, failure: AttemptOutcome['failure']) => {
        // An answer whose status came already stands, whatever happens to its body.
        if (response !== null) return answered(response, '');
        finish({ statusCode: null, error: shortText(error.message || String((error as { code?: unknown }).code)), failure });
      };
      const answered = (res: IncomingMessage, text: string) => {
        const status = res.statusCode ?? 0;
        if (status >= 200 && status < 300) return finish({ statusCode: status, error: null, failure: null });
        const why = status >= 300 && status < 400 ? 'redirects are not followed' : shortText(text);
        finish({ statusCode: status, error: why === '' ? `HTTP ${status}` : `HTTP ${status}: ${why}`, failure: 'http_error' });
      };
      let sent: ClientRequest;
      const post = (again: boolean) => {
        sent = (secure ? httpsRequest : httpRequest)(
          url,
          {
            method: 'POST',
            agent: secure ? https : http,
            headers: {
              'content-type': 'application/json',
              'content-length': body.length,
              'user-agent': USER_AGENT,
              'webhook-id': attempt.eventId,
              'webhook-timestamp': String(attempt.timestamp),
              'webhook-signature': attempt.signature,
            },
            ...(options.allowPrivate ? {} : { lookup: lookupPublicOnly }),
            signal,
          },
          (res) => {
            response = res;
            const chunks: Buffer[] = [];
            let length = 0;
            res.on('data', (chunk: Buffer) => {
              if (length < ERROR_TEXT_LIMIT * 4) chunks.push(chunk);
              length += chunk.length;
              // Past the limit the rest is not read: the connection goes, and the answer stands as it is.
              if (length > RESPONSE_BODY_LIMIT) {
                res.destroy();
                answered(res, Buffer.concat(chunks).toString('utf8'));
              }
            });
            res.on('end', () => answered(res, Buffer.concat(chunks).toString('utf8')));
            res.on('error', () => answered(res, Buffer.concat(chunks).toString('utf8')));
          },
        );
        const request = sent;
        request.on('error', (error: NodeJS.ErrnoException) => {
          // A kept-alive connection the receiver closed as this request went out: once, on a new connection (Node's
          // advice for request.reusedSocket). The receiver may have had it: a duplicate, as a retry would send.
          const closedUnderIt = request.reusedSocket && (error.code === 'ECONNRESET' || error.code === 'EPIPE');
          if (closedUnderIt && !again && response === null && !settled && !signal?.aborted) return post(true);
          fail(error, 'connection_error');
        });
        request.end(body);
      };
      const timer = setTimeout(() => {
        fail(new Error(`timed out after ${options.timeoutMs} ms`), 'timeout');
        sent.destroy();
      }, options.timeoutMs);
      post(false);
    });
  };

  return {
    send,
    close: () => {
      https.destroy();
      http.destroy();
    },
  };
}
