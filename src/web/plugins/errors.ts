import type { FastifyRequest } from 'fastify';
import fp from 'fastify-plugin';
import { handleError } from '../errors.js';
import { trackAllowedMethods } from '../method-not-allowed.js';

declare module 'fastify' {
  interface FastifyInstance {
    /** Throws the answer to a request no route serves: 405 with `Allow` when its path serves other methods, else 404. */
    refuseUnrouted(request: FastifyRequest): never;
  }
}

/**
 * Every failure answers `{ error }` (handleError), and a request no route serves 404 or 405. Registered before any
 * route, so that every route's methods are known.
 */
export default fp(
  async (app) => {
    const refuseUnrouted = trackAllowedMethods(app);
    app.decorate('refuseUnrouted', refuseUnrouted);
    app.setErrorHandler(handleError);
    app.setNotFoundHandler(refuseUnrouted);
  },
  { name: 'errors' },
);
