import type { FastifyInstance } from 'fastify';
import { sendAsset, staticAsset, type StaticAsset } from '../static-asset.js';
import { ETAG_HEADER, IF_NONE_MATCH_REQUEST_HEADER, notModifiedResponse } from '../schemas/conditional.js';

export const OPENAPI_PATH = '/api/v1/openapi.json';

export function registerOpenApiRoute(app: FastifyInstance): void {
  let document: Promise<StaticAsset> | undefined;
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
      // The document is fixed once the app is ready: serialized, tagged and compressed once.
      document ??= staticAsset(Buffer.from(JSON.stringify(app.swagger())));
      reply.header('cache-control', 'public, max-age=300').type('application/json; charset=utf-8');
      return sendAsset(request, reply, await document);
    },
  );
}
