import type { Readable } from 'node:stream';
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
  return bodyTooLarge(limit);
}

const bodyTooLarge = (limit: number) => new PublicError(413, bodyTooLargeMessage(limit), { headers: { connection: 'close' } });

/**
 * A body's bytes as they arrive, for a route that reads its body as a stream (Fastify checks only a declared length
 * then): reading stops with a 413, and the connection is closed, at the first byte past `limit`. A reader that stops
 * early leaves the rest to be drained, not the socket destroyed: the client still gets the answer.
 */
export async function* bytesWithin(body: Readable, limit: number): AsyncGenerator<Buffer> {
  let read = 0;
  try {
    for await (const chunk of body.iterator({ destroyOnReturn: false }) as AsyncIterable<Buffer>) {
      read += chunk.length;
      if (read > limit) throw bodyTooLarge(limit);
      yield chunk;
    }
  } finally {
    if (!body.readableEnded) body.resume();
  }
}

export const bodyTooLargeMessage = (limit: number): string => `Request body is too large: at most ${limit} bytes`;
