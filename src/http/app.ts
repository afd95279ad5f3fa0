import Fastify, { type FastifyBaseLogger, type FastifyInstance } from 'fastify';
import swagger from '@fastify/swagger';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { Authenticator } from '../auth/authenticator.js';
import type { Store } from '../store/store.js';
import { handleError } from './errors.js';
import { trackAllowedMethods } from './method-not-allowed.js';
import { openApiOptions } from './openapi-document.js';
import { registerContactRoutes } from './routes/contacts.js';
import { registerOpenApiRoute } from './routes/openapi.js';

export interface AppDependencies {
  store: Store;
  authenticator: Authenticator;
  apiKeyPrefix: string;
  /** A pino logger, or false for none (tests). */
  logger?: FastifyBaseLogger | false;
}

/** Builds the whole HTTP application without listening: the server and every test use this. */
export async function buildApp(deps: AppDependencies): Promise<FastifyInstance> {
  const app = Fastify({
    loggerInstance: deps.logger || undefined,
    logger: deps.logger === false ? false : undefined,
    requestIdHeader: 'x-request-id',
    return503OnClosing: true,
  }).withTypeProvider<TypeBoxTypeProvider>();

  const methodNotAllowed = trackAllowedMethods(app);
  app.setErrorHandler(handleError);
  app.setNotFoundHandler(methodNotAllowed);
  app.addHook('onRequest', async (request, reply) => {
    reply.header('cache-control', 'no-store');
    reply.header('x-content-type-options', 'nosniff');
    // Answer unknown paths and methods before any body is read, so a bad body can't turn a 405 into a 400.
    if (request.is404) methodNotAllowed(request, reply);
  });

  await app.register(swagger, openApiOptions(deps.apiKeyPrefix));
  registerContactRoutes(app, { contacts: deps.store.contacts, authenticator: deps.authenticator });
  registerOpenApiRoute(app);
  await app.ready();
  return app;
}
