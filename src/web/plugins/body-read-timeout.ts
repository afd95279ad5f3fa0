import { PassThrough, finished } from 'node:stream';
import type { FastifyReply, FastifyRequest } from 'fastify';
import fp from 'fastify-plugin';
import { PublicError } from '../../domain/errors.js';
import { BODY_READ_TIMEOUT_MESSAGE, bodyOverdue, bodyStillArriving, type BodyProgress } from '../body-read-timeout.js';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** The route hands the request to a library that reads the body itself (oidc-provider), not to Fastify. */
    bodyReadByLibrary?: boolean;
  }
}

export interface BodyReadTimeoutOptions {
  /** BODY_READ_TIMEOUT_MS. */
  timeoutMs: number;
}

interface BodyRead extends BodyProgress {
  request: FastifyRequest;
  reply: FastifyReply;
  /** What Fastify's parser or the route reads the body from; null until then, and when a library reads it. */
  body: PassThrough | null;
  /** The connection's bytes read when the wait began: what arrived since is the body's progress. */
  socketBytesAtStart: number;
  checkedAt: number;
}

/**
 * Refuses a request body that stalls or trickles (src/web/body-read-timeout.ts: bodyOverdue), with 408 and
 * `{ error }`, and closes its connection; logged at info, as the client's doing. Node's own request timeout is off
 * (src/web/server-options.ts): it bounds a whole request, which would cut off a large import arriving at a healthy pace.
 * A body Fastify or the route reads fails with the 408, which the error handler answers; one a library reads from the
 * request (OAuth's token endpoint) is answered here; one nobody reads after an answer went out only closes the connection.
 */
export default fp<BodyReadTimeoutOptions>(
  async (app, { timeoutMs }) => {
    const reading = new Set<BodyRead>();
    const reads = new WeakMap<FastifyRequest, BodyRead>();

    app.addHook('onRequest', (request, reply, done) => {
      if (!bodyStillArriving(request.raw)) return done();
      const now = Date.now();
      const read: BodyRead = {
        request,
        reply,
        body: null,
        startedAt: now,
        bytes: 0,
        lastProgressAt: now,
        heldMs: 0,
        socketBytesAtStart: request.raw.socket.bytesRead,
        checkedAt: now,
      };
      reading.add(read);
      reads.set(request, read);
      finished(request.raw, (error) => {
        reading.delete(read);
        if (error) read.body?.destroy(error);
      });
      done();
    });

    app.addHook('preParsing', async (request, _reply, payload) => {
      const read = reads.get(request);
      if (read === undefined || !reading.has(read) || request.routeOptions.config.bodyReadByLibrary) return payload;
      // Read through a stream of its own, which can fail with the 408 while the connection stays up to carry it.
      read.body = request.raw.pipe(new PassThrough());
      return read.body;
    });

    const refuse = ({ request, reply, body, bytes, startedAt }: BodyRead, now: number) => {
      request.log.info({ bodyBytes: bytes, waitedMs: now - startedAt }, 'request body timed out');
      // Answered already (a refusal from the head alone): the rest of the body is of no use.
      if (reply.raw.headersSent) return void request.raw.socket.destroy();
      const error = new PublicError(408, BODY_READ_TIMEOUT_MESSAGE, { headers: { connection: 'close' } });
      if (body !== null) return void body.destroy(error);
      const json = JSON.stringify({ error: BODY_READ_TIMEOUT_MESSAGE });
      reply.raw.writeHead(408, {
        'content-type': 'application/json; charset=utf-8',
        'content-length': Buffer.byteLength(json),
        connection: 'close',
      });
      reply.raw.end(json);
    };

    const check = () => {
      const now = Date.now();
      for (const read of reading) {
        if (read.request.raw.complete) {
          reading.delete(read);
          continue;
        }
        const bytes = read.request.raw.socket.bytesRead - read.socketBytesAtStart;
        if (bytes > read.bytes) {
          read.bytes = bytes;
          read.lastProgressAt = now;
        } else if (readerBehind(read)) {
          read.lastProgressAt = now;
          read.heldMs += now - read.checkedAt;
        }
        read.checkedAt = now;
        if (bodyOverdue(read, now, timeoutMs)) {
          reading.delete(read);
          refuse(read, now);
        }
      }
    };
    const timer = setInterval(check, Math.min(1_000, Math.max(50, timeoutMs / 8))).unref();
    app.addHook('onClose', async () => clearInterval(timer));
  },
  { name: 'body-read-timeout' },
);

/** Whether the server's reader has bytes it has not taken: the client is not the one keeping it waiting. */
function readerBehind({ request, body }: BodyRead): boolean {
  const full = (stream: { readableLength: number; readableHighWaterMark: number }) => stream.readableLength >= stream.readableHighWaterMark;
  return full(request.raw) || (body !== null && full(body));
}
