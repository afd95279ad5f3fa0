import type { IncomingMessage } from 'node:http';
import { finished, type Readable } from 'node:stream';
import type { FastifyRequest } from 'fastify';
import { PublicError } from '../domain/errors.js';

/** The body limit of every route without its own (Fastify's default); a GET reads no body at all. */
export const DEFAULT_BODY_LIMIT_BYTES = 1024 * 1024;

/**
 * A request that declares a body over its route's limit is refused before any of it is read, and its connection is
 * closed: otherwise Node would drain a body no route reads (a GET's) for as long as the client sends it.
 */
export function bodySizeRefusal(request: FastifyRequest): PublicError | null {
  const declared = Number(request.headers['content-length'] ?? 0);
  const limit = request.routeOptions.bodyLimit ?? DEFAULT_BODY_LIMIT_BYTES;
  if (!(declared > limit)) return null;
  return new PublicError(413, bodyTooLargeMessage(limit), { headers: { connection: 'close' } });
}

/**
 * A body's bytes as they arrive, for a route that reads its body as a stream (Fastify checks only a declared length
 * then): reading stops with a 413 at the first byte past `limit`. The stream is left as it is (lingerThenClose).
 */
export async function* bytesWithin(body: Readable, limit: number): AsyncGenerator<Buffer> {
  let read = 0;
  for await (const chunk of body.iterator({ destroyOnReturn: false }) as AsyncIterable<Buffer>) {
    read += chunk.length;
    if (read > limit) throw new PublicError(413, bodyTooLargeMessage(limit));
    yield chunk;
  }
}

/** How long the rest of a body that is not read is discarded, at most, once the request is answered. */
export const LINGER_MS = 5_000;

/**
 * For a request answered before its body was read to the end: discards the rest for LINGER_MS at most, then closes
 * the connection. Closing at once would make the kernel reset it as more of the body arrives, and a client still
 * sending could lose the answer with it.
 */
export function lingerThenClose(request: IncomingMessage): void {
  if (request.readableEnded) return;
  const close = setTimeout(() => request.socket.destroy(), LINGER_MS);
  finished(request, () => clearTimeout(close));
  request.resume();
}

export const bodyTooLargeMessage = (limit: number): string => `Request body is too large: at most ${limit} bytes`;
