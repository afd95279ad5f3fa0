import type { FastifyInstance } from 'fastify';
import { contentEtag, sendWithEtag } from '../conditional.js';
import { ETAG_HEADER, IF_NONE_MATCH_REQUEST_HEADER, notModifiedResponse } from '../schemas/conditional.js';

export const OPENAPI_PATH = '/api/v1/openapi.json';

export function registerOpenApiRoute(app: FastifyInstance): void {
  let document: string | undefined;
  let etag: string | undefined;
  app.get(
    OPENAPI_PATH,
    {
      schema: {
        operationId: 'getOpenApiDocument',
        summary: 'This API’s OpenAPI 3.1 description',
        tags: ['meta'],
        headers: IF_NONE_MATCH_REQUEST_HEADER,
        response: {
          200: { type: 'object', additionalProperties: true, description: 'An OpenAPI 3.1 document.', headers: ETAG_HEADER },
          304: notModifiedResponse('the document has not changed since the `ETag` sent in `If-None-Match`'),
        },
      },
    },
    async (request, reply) => {
      // The document is fixed once the app is ready: serialized and tagged once.
      document ??= JSON.stringify(app.swagger());
      etag ??= contentEtag(document);
      reply.header('cache-control', 'public, max-age=300').type('application/json; charset=utf-8');
      return sendWithEtag(request, reply, document, etag);
    },
  );
}
