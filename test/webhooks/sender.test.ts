import { lookup } from 'node:dns/promises';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { createServer as createNetServer } from 'node:net';
import { hostname } from 'node:os';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isPublicAddress } from '../../src/domain/public-address.js';
import { createWebhookSender, RESPONSE_BODY_LIMIT, type WebhookAttempt } from '../../src/webhooks/sender.js';
import { listenOnFreePort } from '../support/listen.js';

/** A name of this machine that resolves to loopback only (the host name, in /etc/hosts), or null. */
async function loopbackName(): Promise<string | null> {
  const name = hostname();
  try {
    const addresses = await lookup(name, { all: true });
    return addresses.length > 0 && addresses.every(({ address }) => !isPublicAddress(address)) ? name : null;
  } catch {
    return null;
  }
}

describe('webhook sender: one attempt', () => {
  const server = createServer();
  let origin = '';
  let port = 0;
  let connections = 0;
  const received: IncomingMessage[] = [];
  const routes: Record<string, (response: ServerResponse) => void> = {
    '/ok': (response) => response.writeHead(204).end(),
    '/moved': (response) => response.writeHead(301, { location: '/ok' }).end(),
    '/refused': (response) => response.writeHead(500).end(`database\nexploded: ${'x'.repeat(1000)}`),
    '/huge': (response) => {
      response.writeHead(200);
      const chunk = Buffer.alloc(16 * 1024, 'a');
      // Far past the limit: the sender stops reading and drops the connection.
      const write = (left: number): void => {
        if (left === 0 || response.destroyed) return void response.end();
        if (response.write(chunk)) write(left - 1);
        else response.once('drain', () => write(left - 1));
      };
      write(1024);
    },
    '/slow': () => undefined,
  };
  const sender = createWebhookSender({ allowPrivate: true, timeoutMs: 500 });
  const attempt = (path: string): WebhookAttempt => ({
    url: `${origin}${path}`,
    eventId: 'msg_test',
    timestamp: 1_700_000_000,
    signature: 'v1,abc',
    body: '{"type":"contact.deleted"}',
  });

  beforeAll(async () => {
    server.on('connection', () => (connections += 1));
    server.on('request', (request: IncomingMessage, response: ServerResponse) => {
      received.push(request);
      request.resume();
      routes[request.url ?? '']?.(response);
    });
    ({ origin, port } = await listenOnFreePort(server));
  });
  afterAll(async () => {
    sender.close();
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  });

  it('POSTs the body with the Standard Webhooks headers; a 2xx is a success', async () => {
    const outcome = await sender.send(attempt('/ok'));
    expect(outcome).toEqual({ statusCode: 204, error: null, durationMs: expect.any(Number), failure: null });
    const request = received.at(-1)!;
    expect(request.method).toBe('POST');
    expect(request.headers).toMatchObject({
      'content-type': 'application/json',
      'webhook-id': 'msg_test',
      'webhook-timestamp': '1700000000',
      'webhook-signature': 'v1,abc',
      'user-agent': expect.stringMatching(/^contacts-read-api-webhooks\//),
    });
  });

  it('keeps connections alive between attempts', async () => {
    await sender.send(attempt('/ok'));
    const before = connections;
    for (let index = 0; index < 5; index += 1) await sender.send(attempt('/ok'));
    expect(connections).toBe(before);
  });

  it('does not follow a redirect: a 3xx is a failure', async () => {
    const count = received.length;
    expect(await sender.send(attempt('/moved'))).toMatchObject({
      statusCode: 301,
      error: 'HTTP 301: redirects are not followed',
      failure: 'http_error',
    });
    expect(received.length).toBe(count + 1);
  });

  it('keeps at most 200 characters of a refusal’s body, on one line', async () => {
    const outcome = await sender.send(attempt('/refused'));
    expect(outcome.statusCode).toBe(500);
    expect(outcome.error).toMatch(/^HTTP 500: database exploded: x+$/);
    expect(outcome.error!.length).toBe('HTTP 500: '.length + 200);
  });

  it(`reads at most ${RESPONSE_BODY_LIMIT / 1024} KiB of an answer, then drops the connection; the status stands`, async () => {
    expect(await sender.send(attempt('/huge'))).toMatchObject({ statusCode: 200, error: null, failure: null });
  });

  it('gives up on an attempt after WEBHOOK_TIMEOUT_MS', async () => {
    expect(await sender.send(attempt('/slow'))).toMatchObject({ statusCode: null, error: 'timed out after 500 ms', failure: 'timeout' });
  });

  it('reports a refused connection as a failure, never a rejection', async () => {
    const closed = createServer();
    const { origin: nowhere } = await listenOnFreePort(closed);
    await new Promise((resolve) => closed.close(resolve));
    const outcome = await sender.send({ ...attempt('/'), url: `${nowhere}/` });
    expect(outcome).toMatchObject({ statusCode: null, failure: 'connection_error', error: expect.stringMatching(/ECONNREFUSED/) });
  });

  it('sends again, once, on a new connection when a kept-alive one was closed under the request', async () => {
    // Answers the first request of each connection, and closes the connection when a second one comes on it.
    const requestsSeen: number[] = [];
    const closing = createNetServer((socket) => {
      let requests = 0;
      socket.on('data', (chunk) => {
        if (!chunk.toString('latin1').startsWith('POST')) return;
        requests += 1;
        requestsSeen.push(requests);
        if (requests > 1) return void socket.destroy();
        socket.write('HTTP/1.1 200 OK\r\nContent-Length: 0\r\nConnection: keep-alive\r\n\r\n');
      });
    });
    const { origin: closingOrigin } = await listenOnFreePort(closing);
    try {
      const url = `${closingOrigin}/`;
      expect(await sender.send({ ...attempt('/'), url })).toMatchObject({ statusCode: 200, failure: null });
      expect(await sender.send({ ...attempt('/'), url })).toMatchObject({ statusCode: 200, failure: null });
      // The second attempt met the kept-alive connection closing, and went again on a new one.
      expect(requestsSeen).toEqual([1, 2, 1]);
    } finally {
      closing.close();
    }
  });

  describe('without WEBHOOKS_ALLOW_PRIVATE_URLS', () => {
    const strict = createWebhookSender({ allowPrivate: false, timeoutMs: 2000 });
    afterAll(() => strict.close());

    it('refuses plain http, an address literal that is not public and localhost before connecting', async () => {
      const before = connections;
      for (const url of [
        `${origin}/ok`,
        `https://127.0.0.1:${port}/ok`,
        `https://[::ffff:127.0.0.1]:${port}/ok`,
        `https://localhost:${port}/ok`,
      ]) {
        const outcome = await strict.send({ ...attempt('/ok'), url });
        expect(outcome, url).toMatchObject({ statusCode: null, failure: 'connection_error', error: expect.stringMatching(/^url must/) });
      }
      expect(connections).toBe(before);
    });

    it('refuses a host name that resolves to a loopback address when it connects (the lookup checks every address)', async (context) => {
      const name = await loopbackName();
      if (name === null) return context.skip();
      const before = connections;
      const outcome = await strict.send({ ...attempt('/ok'), url: `https://${name}:${port}/ok` });
      expect(outcome).toMatchObject({
        statusCode: null,
        failure: 'connection_error',
        error: expect.stringMatching(new RegExp(`^${name} resolves to .*, which is not a public address$`)),
      });
      expect(connections).toBe(before);
    });
  });
});
