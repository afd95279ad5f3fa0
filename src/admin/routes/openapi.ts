import type { FastifyInstance } from 'fastify';
import { ADMIN_SECURITY, adminErrorResponses, SUCCESS_HEADERS } from '../schemas/common.js';

export const ADMIN_OPENAPI_PATH = '/openapi.json';

/** GET /admin/v1/openapi.json: the admin API's own OpenAPI 3.1 document, to the admin token only. */
export async function adminOpenApiRoute(app: FastifyInstance): Promise<void> {
  let document: string | undefined;
  app.get(
    ADMIN_OPENAPI_PATH,
    {
      schema: {
        operationId: 'getAdminOpenApiDocument',
        summary: 'This API’s OpenAPI 3.1 description',
        description: 'This document, as this deployment serves it; generated from the schemas that validate every request.',
        tags: ['meta'],
        security: ADMIN_SECURITY,
        response: {
          ...adminErrorResponses({}),
          200: { type: 'object', additionalProperties: true, description: 'An OpenAPI 3.1 document.', headers: SUCCESS_HEADERS },
        },
      },
    },
    async (_request, reply) => {
      // Fixed once the app is ready.
      document ??= JSON.stringify(app.swagger());
      return reply.type('application/json; charset=utf-8').send(document);
    },
  );
}
