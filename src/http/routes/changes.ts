import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import {
  assertTokenFollowable,
  assertTokenOwner,
  encodeSyncToken,
  decodeSyncToken,
  parseChangesRequest,
  SYNC_TOKEN_EXPIRED_MESSAGE,
  type ChangePosition,
} from '../../domain/changes.js';
import type { ChangeRecord, ContactStore } from '../../store/store.js';
import { principalOf } from '../authorize.js';
import { ifNoneMatchOf, notModified } from '../conditional.js';
import { COMPRESSION_HEADERS, IF_NONE_MATCH_REQUEST_HEADER, notModifiedResponse } from '../schemas/conditional.js';
import { acceptedCodings, encodeOnce } from '../page-compression.js';
import { sendJson } from '../send-json.js';
import { varyOn } from '../vary.js';
import { ChangesResponseSchema, ListChangesQuerySchema } from '../schemas/changes.js';
import { errorResponse, NO_STORE_HEADER } from '../schemas/common.js';
import { AUTHORIZED_ERROR_RESPONSES } from '../schemas/authorized-responses.js';
import { MALFORMED_REQUEST } from '../schemas/every-operation-responses.js';
import { RATE_LIMIT_HEADERS, SOMETIMES_RATE_LIMIT_HEADERS } from '../schemas/rate-limit-headers.js';
import { CONTACTS_PATH } from './contacts.js';

export const CHANGES_PATH = `${CONTACTS_PATH}/changes`;

const listChangesSchema = {
  operationId: 'listContactChanges',
  summary: 'What changed in your network since a token (extension)',
  description: [
    'An extension beside `listContacts`: the changes to your contacts after `since`, oldest first, so a copy can stay',
    'in step without listing everything again. Without `since`, the answer is the current position: take it first,',
    'then walk `listContacts`, then follow the changes since it (a change made during the walk is replayed; replaying',
    'an upsert is harmless). Several changes to one contact between two calls come as its latest state.',
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
      `\`since\` is malformed or another user’s token, \`limit\` is out of bounds, or an unknown parameter was sent. ${MALFORMED_REQUEST}`,
      SOMETIMES_RATE_LIMIT_HEADERS,
    ),
    410: errorResponse(`The token is older than the retention (or unknown): \`${SYNC_TOKEN_EXPIRED_MESSAGE}\`.`, RATE_LIMIT_HEADERS),
  },
} as const;

/** A change as JSON; an upsert embeds the contact's JSON as the database stored it, as the listing sends it. */
function changeJson(record: ChangeRecord): string {
  const { state } = record;
  const head = `{"type":"${state.kind === 'listable' ? 'upsert' : state.kind === 'merged' ? 'merge' : 'delete'}","id":${JSON.stringify(record.contactId)},"changed_at":${JSON.stringify(record.changedAt)}`;
  if (state.kind === 'listable') return `${head},"contact":${state.json}}`;
  if (state.kind === 'merged') return `${head},"merged_into":${JSON.stringify(state.mergedInto)}}`;
  return `${head}}`;
}

/** The entity tag of an empty answer: nothing changed after `seq`. Sent back in If-None-Match, it gets 304 while that holds. */
function nothingNewEtag(seq: number): string {
  return `"c${seq}"`;
}

/** The change feed; registered under registerAuthorizedRoutes. */
export function registerChangeRoutes(app: FastifyInstance, deps: { contacts: ContactStore; retentionMs: number }): void {
  app.withTypeProvider<TypeBoxTypeProvider>().get(
    CHANGES_PATH,
    {
      schema: listChangesSchema,
      // Strict parsing happens before schema validation, which would coerce `1e2` into a number; the token is read again
      // in the handler, as the schema keeps it a string.
      preValidation: async (request: FastifyRequest) => {
        const query = request.query as Record<string, unknown>;
        const { limit } = parseChangesRequest(query);
        request.query = query.since === undefined ? { limit } : { since: query.since, limit };
      },
    },
    async (request, reply) => {
      // preValidation filled the default.
      const limit = request.query.limit!;
      const since = request.query.since === undefined ? null : decodeSyncToken(request.query.since);
      const ownerId = principalOf(request).ownerId;
      const issuedAt = Date.now();
      varyOn(reply, 'Accept-Encoding');
      const token = (position: ChangePosition) => encodeSyncToken({ ...position, ownerId, issuedAt });
      if (since === null) {
        const log = await deps.contacts.changeLog(ownerId);
        return { data: [], next_since: token({ seq: log.currentSeq, after: null }), has_more: false };
      }
      assertTokenOwner(since, ownerId);
      if (ifNoneMatchOf(request) !== undefined && since.after === null) {
        const log = await deps.contacts.changeLog(ownerId);
        assertTokenFollowable(since, log, deps.retentionMs, issuedAt);
        // A 304 keeps the client on its token, so only while the token has half its retention left.
        if (
          log.currentSeq === since.seq &&
          issuedAt - since.issuedAt < deps.retentionMs / 2 &&
          notModified(request, reply, nothingNewEtag(since.seq))
        ) {
          return reply;
        }
      }
      const read = await deps.contacts.readChanges(ownerId, since, limit + 1);
      assertTokenFollowable(since, read.log, deps.retentionMs, issuedAt);
      if (read.records.length === 0) reply.header('etag', nothingNewEtag(read.log.currentSeq));
      const records = read.records.slice(0, limit);
      const hasMore = read.records.length > limit;
      const last = records.at(-1);
      const next = hasMore && last ? { seq: last.seq, after: last.contactId } : { seq: read.log.currentSeq, after: null };
      const json = `{"data":[${records.map(changeJson).join(',')}],"next_since":${JSON.stringify(token(next))},"has_more":${hasMore}}`;
      const encoded = await encodeOnce(json, acceptedCodings(request.headers['accept-encoding']));
      if (encoded === null) return sendJson(reply, json);
      return sendJson(reply.header('content-encoding', encoded.coding), encoded.body);
    },
  );
}
