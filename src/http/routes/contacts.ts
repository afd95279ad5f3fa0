import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { parsePageRequest, type PageRequest } from '../../domain/pagination.js';
import { listContactsJson, listingVersion, type ContactReader } from '../../operations/contacts.js';
import { errorResponse, NO_STORE_HEADER } from '../../web/schemas/common.js';
import { MALFORMED_EXAMPLE, MALFORMED_REQUEST } from '../../web/schemas/every-operation-responses.js';
import { COMPRESSION_HEADERS, ETAG_HEADER, IF_NONE_MATCH_REQUEST_HEADER, notModifiedResponse } from '../../web/schemas/conditional.js';
import { ContactListResponseSchema, ListContactsQuerySchema } from '../schemas/contact-list.js';
import { AUTHORIZED_ERROR_RESPONSES } from '../../web/schemas/authorized-responses.js';
import { RATE_LIMIT_HEADERS, SOMETIMES_RATE_LIMIT_HEADERS } from '../../web/schemas/rate-limit-headers.js';
import { principalOf } from '../../web/authorize.js';
import { codedEtag, notModifiedInAnyCoding } from '../../web/conditional.js';
import { acceptedCodings, type ContentCoding } from '../../web/content-coding.js';
import { CompressedPages, type EncodedPage, type PageCacheBudget } from '../page-compression.js';
import { sendJson } from '../send-json.js';
import type { ServiceKeySource } from '../../web/service-key.js';
import { varyOn } from '../../web/vary.js';

export const CONTACTS_PATH = '/api/v1/contacts';

/**
 * A page's strong entity tag: the owner's tag (ServiceKey.ownerTag: two owners at the same version never share a tag),
 * the owner's listing version (every write to the owner's contacts changes it), the page size and the offset. The
 * same tag means the same bytes.
 */
export function pageEtag(ownerTag: string, version: number, page: PageRequest, coding: ContentCoding | null = null): string {
  return codedEtag(`"p${ownerTag}-${version}-${page.limit}-${page.offset}"`, coding);
}

/** How parsePageRequest refuses a query: the document's examples are the server's own words. */
function pageRefusal(query: Record<string, unknown>): string {
  try {
    parsePageRequest(query);
  } catch (error) {
    return (error as Error).message;
  }
  throw new Error(`the page request ${JSON.stringify(query)} is accepted`);
}

const listContactsSchema = {
  operationId: 'listContacts',
  summary: 'List the contacts in your network',
  description: [
    'Lists the contacts owned by the API key’s user, with offset pagination.',
    '',
    '**Ordering** is stable: `created_at` ascending, then `id` ascending. New contacts are appended at the end,',
    'so walking pages with `nextOffset` sees no duplicates and no gaps while contacts are added.',
    '',
    'Soft-merged duplicates and the user’s own self row are never listed or counted.',
    'No owner parameter exists: results are always scoped to the key’s user, and unknown query parameters are refused.',
  ].join('\n'),
  tags: ['contacts'],
  security: [{ bearerAuth: [] }],
  querystring: ListContactsQuerySchema,
  headers: IF_NONE_MATCH_REQUEST_HEADER,
  response: {
    ...AUTHORIZED_ERROR_RESPONSES,
    200: {
      ...ContactListResponseSchema,
      description: 'A page of contacts.',
      headers: { 'Cache-Control': NO_STORE_HEADER, ...ETAG_HEADER, ...COMPRESSION_HEADERS, ...RATE_LIMIT_HEADERS },
    },
    304: notModifiedResponse(
      'the page (same contacts, same limit and offset) has not changed since the `ETag` sent in `If-None-Match`. It counts against the rate limit like any other request',
      NO_STORE_HEADER,
      RATE_LIMIT_HEADERS,
    ),
    400: errorResponse(
      `\`limit\` or \`offset\` is not a base-10 integer within bounds or is repeated, or an unknown query parameter was sent. ${MALFORMED_REQUEST}`,
      SOMETIMES_RATE_LIMIT_HEADERS,
      {
        'A limit out of bounds': pageRefusal({ limit: '500' }),
        'A repeated parameter': pageRefusal({ offset: ['0', '50'] }),
        'An unknown parameter': pageRefusal({ owner_id: '42' }),
        ...MALFORMED_EXAMPLE,
      },
    ),
  },
} as const;

/** The REST contact routes; registered under registerAuthorizedRoutes, which sets each request's principal. */
export function registerContactRoutes(
  app: FastifyInstance,
  deps: { contacts: ContactReader; serviceKey: ServiceKeySource; pageCaches?: PageCacheBudget },
): void {
  const api = app.withTypeProvider<TypeBoxTypeProvider>();
  const compressed = new CompressedPages(deps.pageCaches);
  api.get(
    CONTACTS_PATH,
    {
      schema: listContactsSchema,
      // Strict parsing happens before schema validation, which would coerce `1e2` or `` into numbers.
      preValidation: (request: FastifyRequest, _reply, done) => {
        try {
          request.query = parsePageRequest(request.query as Record<string, unknown>);
        } catch (error) {
          return done(error as Error);
        }
        done();
      },
    },
    async (request, reply) => {
      // Validation filled every default, so both values are present.
      const page = request.query as PageRequest;
      // The database built the contacts' JSON from the same fields ContactSchema declares (the conformance
      // suite and the OpenAPI validation test hold it to that), so the page is sent without re-serializing.
      const { ownerId } = principalOf(request);
      const ownerTag = (deps.serviceKey.current() ?? (await deps.serviceKey.ready())).ownerTag(ownerId);
      varyOn(reply, 'Accept-Encoding');
      const codings = acceptedCodings(request.headers['accept-encoding']);
      const pageKey = (version: number) => `${ownerId}:${version}:${page.limit}:${page.offset}`;
      const send = (version: number, { coding, body }: EncodedPage) => {
        if (coding !== null) reply.header('content-encoding', coding);
        return sendJson(reply.header('etag', pageEtag(ownerTag, version, page, coding)), body);
      };
      // The version alone (the owner's cached listing state) answers a 304, or finds the page kept before.
      const version = await listingVersion(deps.contacts, ownerId);
      if (notModifiedInAnyCoding(request, reply, pageEtag(ownerTag, version, page))) return reply;
      const kept = compressed.read(pageKey(version), codings);
      if (kept !== null) return send(version, kept);
      const read = await listContactsJson(deps.contacts, ownerId, page);
      return send(read.version, await compressed.encode(pageKey(read.version), read.json, codings));
    },
  );
}
