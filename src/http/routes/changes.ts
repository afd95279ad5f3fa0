import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import {
  assertTokenOwner,
  encodeSyncToken,
  decodeSyncToken,
  parseChangesRequest,
  SINCE_BEGINNING,
  SYNC_TOKEN_EXPIRED_MESSAGE,
} from '../../domain/changes.js';
import { changeLogForToken, changeLogState, readFeedPage, type ChangeFeedSource } from '../../operations/change-feed.js';
import { changeJson } from '../../operations/change-json.js';
import { principalOf } from '../../web/authorize.js';
import type { ServiceKeySource } from '../../web/service-key.js';
import { ifNoneMatchOf, notModified } from '../../web/conditional.js';
import { COMPRESSION_HEADERS, IF_NONE_MATCH_REQUEST_HEADER, notModifiedResponse } from '../../web/schemas/conditional.js';
import { sendJson } from '../send-json.js';
import { ChangesResponseSchema, ListChangesQuerySchema } from '../schemas/changes.js';
import { errorResponse, NO_STORE_HEADER } from '../../web/schemas/common.js';
import { AUTHORIZED_ERROR_RESPONSES } from '../../web/schemas/authorized-responses.js';
import { MALFORMED_REQUEST } from '../../web/schemas/every-operation-responses.js';
import { RATE_LIMIT_HEADERS, SOMETIMES_RATE_LIMIT_HEADERS } from '../../web/schemas/rate-limit-headers.js';
import { CONTACTS_PATH } from './contacts.js';

export const CHANGES_PATH = `${CONTACTS_PATH}/changes`;

const listChangesSchema = {
  operationId: 'listContactChanges',
  summary: 'What changed in your network since a token (extension)',
  description: [
    'An extension beside `listContacts`: the changes to your contacts after `since`, oldest first, so a copy can stay',
    'in step without listing everything again. To start a copy, pass `since=0`: every contact comes as an `upsert`, in',
    'pages of `limit`, and then the changes made meanwhile, so a copy built from it misses nothing written during the',
    'walk (an upsert may come twice; applying the changes in order gives the listing). Without `since`, the answer is',
    'the current position and no changes. Several changes to one contact between two calls come as its latest state.',
  ].join('\n'),
  tags: ['sync'],
  security: [{ bearerAuth: [] }],
  querystring: ListChangesQuerySchema,
  headers: IF_NONE_MATCH_REQUEST_HEADER,
  response: {
    ...AUTHORIZED_ERROR_RESPONSES,
    200: {
      ...ChangesResponseSchema,
      description: 'Changes after `since`. An answer with no change carries an `ETag`.',
      headers: {
        'Cache-Control': NO_STORE_HEADER,
        ...COMPRESSION_HEADERS,
        ETag: {
          description: 'Sent when nothing changed after `since`: send it back in `If-None-Match` to get 304 while that holds.',
          type: 'string',
        },
        ...RATE_LIMIT_HEADERS,
      },
    },
    304: notModifiedResponse(
      'still nothing new after `since` (the `ETag` of an empty answer was sent in `If-None-Match`); keep the token. It counts against the rate limit like any other request',
      NO_STORE_HEADER,
      RATE_LIMIT_HEADERS,
    ),
    400: errorResponse(
      `\`since\` is malformed, altered or unsigned (tokens are signed: pass \`next_since\` exactly as returned), or another user’s token; \`limit\` is out of bounds, or an unknown parameter was sent. ${MALFORMED_REQUEST}`,
      SOMETIMES_RATE_LIMIT_HEADERS,
    ),
    410: errorResponse(
      `The token is older than the retention, from another database, or issued before tokens were signed: \`${SYNC_TOKEN_EXPIRED_MESSAGE}\`. Start again with \`since=0\`.`,
      RATE_LIMIT_HEADERS,
    ),
  },
} as const;

interface FeedDependencies extends ChangeFeedSource {
  serviceKey: ServiceKeySource;
}

/**
 * The entity tag of an empty answer: nothing changed after `seq` in the owner's network. Sent back in If-None-Match, it
 * gets 304 while that holds; the owner's tag makes it worthless to anyone else.
 */
function nothingNewEtag(ownerTag: string, seq: number): string {
  return `"c${ownerTag}-${seq}"`;
}

/** The change feed; registered under registerAuthorizedRoutes. */
export function registerChangeRoutes(app: FastifyInstance, deps: FeedDependencies): void {
  app.withTypeProvider<TypeBoxTypeProvider>().get(
    CHANGES_PATH,
    {
      schema: listChangesSchema,
      config: { compress: true },
      // Strict parsing happens before schema validation, which would coerce `1e2` into a number; the token is read in
      // the handler, with the service key.
      preValidation: async (request: FastifyRequest) => {
        const { since, limit } = parseChangesRequest(request.query as Record<string, unknown>);
        request.query = since === null ? { limit } : { since, limit };
      },
    },
    async (request, reply) => {
      // preValidation filled the default.
      const limit = request.query.limit!;
      const key = await deps.serviceKey.ready();
      const ownerId = principalOf(request).ownerId;
      const now = Date.now();
      if (request.query.since === undefined) {
        const log = await changeLogState(deps.contacts, ownerId);
        const position = { ownerId, seq: log.currentSeq, after: null, issuedAt: now, listedThrough: null };
        return { data: [], next_since: encodeSyncToken(position, key), has_more: false };
      }
      const since = request.query.since === SINCE_BEGINNING ? null : decodeSyncToken(request.query.since, key);
      if (since !== null) assertTokenOwner(since, ownerId);
      if (since !== null && since.after === null && since.listedThrough === null && ifNoneMatchOf(request) !== undefined) {
        const log = await changeLogForToken(deps, ownerId, since, now);
        // A 304 keeps the client on its token, so only while the token has half its retention left.
        if (
          log.currentSeq === since.seq &&
          now - since.issuedAt < deps.retentionMs / 2 &&
          notModified(request, reply, nothingNewEtag(key.ownerTag(ownerId), since.seq))
        ) {
          return reply;
        }
      }
      const answer = await readFeedPage(deps, ownerId, since, limit, now);
      if (answer.changes.length === 0 && !answer.hasMore) reply.header('etag', nothingNewEtag(key.ownerTag(ownerId), answer.next.seq));
      const json = `{"data":[${answer.changes.map(changeJson).join(',')}],"next_since":${JSON.stringify(encodeSyncToken(answer.next, key))},"has_more":${answer.hasMore}}`;
      return sendJson(reply, json);
    },
  );
}
