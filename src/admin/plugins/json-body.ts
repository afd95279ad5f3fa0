import fp from 'fastify-plugin';
import { PublicError } from '../../domain/errors.js';

declare module 'fastify' {
  interface FastifyRequest {
    /** The bytes of a JSON body as they came, for an Idempotency-Key's fingerprint; null without a body. */
    rawBody: Buffer | null;
  }
}

export const UNSUPPORTED_MEDIA_TYPE_MESSAGE = 'Content-Type must be application/json';

/**
 * The admin API takes JSON bodies (a route may add its own types in its own scope): any other Content-Type, or a body
 * without one, is a 415. Each body's bytes are kept, and a POST sent without a body is an empty object, so that a route
 * whose fields are all optional needs none. An empty body declared JSON is no body: many HTTP wrappers send
 * `Content-Type: application/json` with every call, a DELETE's too.
 */
export default fp(
  async (app) => {
    const parseJson = app.getDefaultJsonParser('error', 'error');
    app.decorateRequest('rawBody', null);
    app.removeAllContentTypeParsers();
    app.addContentTypeParser('application/json', { parseAs: 'buffer' }, (request, body, done) => {
      if ((body as Buffer).length === 0) return done(null, undefined);
      request.rawBody = body as Buffer;
      void parseJson(request, request.rawBody.toString('utf8'), done);
    });
    app.addContentTypeParser('*', (_request, _payload, done) => done(new PublicError(415, UNSUPPORTED_MEDIA_TYPE_MESSAGE)));
    app.addHook('preValidation', async (request) => {
      if (request.method === 'POST' && request.body === undefined) request.body = {};
    });
  },
  { name: 'json-body' },
);
