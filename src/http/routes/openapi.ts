import type { FastifyInstance } from 'fastify';
import { sendAsset, staticAsset, type StaticAsset } from '../static-asset.js';
import type { ResponseHeader } from '../../web/schemas/common.js';
import { COMPRESSION_HEADERS, ETAG_HEADER, IF_NONE_MATCH_REQUEST_HEADER, notModifiedResponse } from '../../web/schemas/conditional.js';
import { EVERY_OPERATION_RESPONSES } from '../../web/schemas/every-operation-responses.js';

export const OPENAPI_PATH = '/api/v1/openapi.json';
const CACHE_CONTROL = 'public, max-age=300';
const CACHE_CONTROL_HEADER: ResponseHeader = {
  description: `Always \`${CACHE_CONTROL}\`: the document changes only with a deployment.`,
  type: 'string',
  enum: [CACHE_CONTROL],
  required: true,
};

export function registerOpenApiRoute(app: FastifyInstance): void {
  let document: Promise<StaticAsset> | undefined;
  app.get(
    OPENAPI_PATH,
    {
      schema: {
        operationId: 'getOpenApiDocument',
        summary: 'This API’s OpenAPI 3.1 description',
        description:
          'This document, as this deployment serves it: public, compressed when the client allows, and tagged for `If-None-Match`.',
        tags: ['meta'],
        headers: IF_NONE_MATCH_REQUEST_HEADER,
        response: {
          ...EVERY_OPERATION_RESPONSES,
          200: {
            type: 'object',
            additionalProperties: true,
            description: 'An OpenAPI 3.1 document.',
            headers: { 'Cache-Control': CACHE_CONTROL_HEADER, ...ETAG_HEADER, ...COMPRESSION_HEADERS },
          },
          304: notModifiedResponse('the document has not changed since the `ETag` sent in `If-None-Match`', CACHE_CONTROL_HEADER),
        },
      },
    },
    async (request, reply) => {
      // The document is fixed once the app is ready: serialized, tagged and compressed once.
      document ??= staticAsset(Buffer.from(JSON.stringify(app.swagger())));
      reply.header('cache-control', CACHE_CONTROL).type('application/json; charset=utf-8');
      return sendAsset(request, reply, await document);
    },
  );
}
