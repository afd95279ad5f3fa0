import type { FastifyInstance } from 'fastify';

export const OPENAPI_PATH = '/api/v1/openapi.json';

export function registerOpenApiRoute(app: FastifyInstance): void {
  app.get(
    OPENAPI_PATH,
    {
      schema: {
        operationId: 'getOpenApiDocument',
        summary: 'This API’s OpenAPI 3.1 description',
        tags: ['meta'],
        response: { 200: { type: 'object', additionalProperties: true, description: 'An OpenAPI 3.1 document.' } },
      },
    },
    async (_request, reply) => {
      reply.header('cache-control', 'public, max-age=300');
      return app.swagger();
    },
  );
}
