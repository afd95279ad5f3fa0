import { randomUUID } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import fp from 'fastify-plugin';
import { containsSecretShapedText } from '../../logger.js';

export const REQUEST_ID_HEADER = 'x-request-id';
/**
 * A client's request id is kept only when it is a plain token of at most 64 characters (a UUID, a W3C trace id),
 * so it can't inject into logs or headers.
 */
const SANE_REQUEST_ID = /^[A-Za-z0-9._-]{1,64}$/;

/**
 * The request's id: the client's `X-Request-Id` when it is a sane token and not shaped like an API key or a secret
 * token (it is written into every log line of the request), else a new UUID.
 */
export function requestIdOf(request: IncomingMessage): string {
  const offered = request.headers[REQUEST_ID_HEADER];
  return typeof offered === 'string' && SANE_REQUEST_ID.test(offered) && !containsSecretShapedText(offered) ? offered : randomUUID();
}

/** Returns the request id (requestIdOf, the app's genReqId) in `X-Request-Id` on every response, errors included. */
export default fp(
  async (app) => {
    app.addHook('onRequest', (request, reply, done) => {
      reply.header(REQUEST_ID_HEADER, request.id);
      done();
    });
  },
  { name: 'request-id' },
);
