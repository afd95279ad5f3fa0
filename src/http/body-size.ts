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

export const bodyTooLargeMessage = (limit: number): string => `Request body is too large: at most ${limit} bytes`;
