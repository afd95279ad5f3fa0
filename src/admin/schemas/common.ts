import Type from 'typebox';
import { bodyTooLargeMessage, DEFAULT_BODY_LIMIT_BYTES } from '../../web/body-size.js';
import { methodNotAllowedMessage, noSuchEndpointMessage } from '../../web/method-not-allowed.js';
import { errorResponse, NO_STORE_HEADER, type ResponseHeader } from '../../web/schemas/common.js';
import { EVERY_OPERATION_RESPONSES, MALFORMED_EXAMPLE, MALFORMED_REQUEST } from '../../web/schemas/every-operation-responses.js';
import {
  IDEMPOTENCY_IN_PROGRESS_MESSAGE,
  IDEMPOTENCY_MISMATCH_MESSAGE,
  INVALID_IDEMPOTENCY_KEY_MESSAGE,
} from '../../operations/idempotency.js';
import { ADMIN_WWW_AUTHENTICATE, INVALID_ADMIN_TOKEN_MESSAGE } from '../plugins/admin-auth.js';
import { UNSUPPORTED_MEDIA_TYPE_MESSAGE } from '../plugins/json-body.js';

/** Every admin operation takes the admin token. */
export const ADMIN_SECURITY = [{ adminToken: [] }];

export const SUCCESS_HEADERS: Record<string, ResponseHeader> = { 'Cache-Control': NO_STORE_HEADER };

/** A 204: no body. */
export function noContentResponse(description: string) {
  return { type: 'null', description: `${description} No body.`, headers: SUCCESS_HEADERS } as const;
}

/** What a POST's answer carries when it is the kept answer of an earlier request with the same Idempotency-Key. */
export const IDEMPOTENT_SUCCESS_HEADERS: Record<string, ResponseHeader> = {
  ...SUCCESS_HEADERS,
  'Idempotent-Replayed': {
    description: '`true` when this is the kept answer of an earlier request with the same `Idempotency-Key`.',
    type: 'string',
    enum: ['true'],
  },
};

/** The header every POST takes (parseIdempotencyKey checks it, so that its 400 says what it must be). */
export const IDEMPOTENCY_KEY_REQUEST_HEADER = Type.Object({
  'idempotency-key': Type.Optional(
    Type.String({
      description:
        'Makes the request safe to retry (Stripe’s semantics): 1 to 255 printable ASCII characters, such as a UUID. The same key with the same request (its path’s ids in any case) within 24 hours gets the first answer again, with `Idempotent-Replayed: true`, and does nothing more; with another request, 422.',
    }),
  ),
});

/** The 404 of an operation on a user named in its path. */
export const NO_SUCH_USER = { 'No user with this id': 'No user with id "0190b7a4-3c2e-7f00-8000-000000000000"' };

/** The messages of one status an operation gives, by what causes each. */
type Examples = Record<string, string>;

export interface OperationRefusals {
  /** The operation's own 400s, besides a malformed request. */
  badRequest?: Examples;
  /** The records it may not find, besides a path with no operation. */
  notFound?: Examples;
  conflict?: Examples;
  /** A POST: it takes a JSON body (415 otherwise) and an Idempotency-Key (409 while in progress, 422 for another request). */
  post?: boolean;
}

/** The error answers of an admin operation: the HTTP layer's, the admin token's, and its own. */
export function adminErrorResponses(refusals: OperationRefusals) {
  const post = refusals.post === true;
  const conflicts = {
    ...refusals.conflict,
    ...(post ? { 'The same Idempotency-Key is in use by a request still running': IDEMPOTENCY_IN_PROGRESS_MESSAGE } : {}),
  };
  return {
    ...EVERY_OPERATION_RESPONSES,
    400: errorResponse(
      `The request is not what the operation takes: the message names the field, parameter or header. ${MALFORMED_REQUEST}`,
      {},
      {
        ...refusals.badRequest,
        ...(post ? { 'A body that is not JSON': "Body is not valid JSON but content-type is set to 'application/json'" } : {}),
        ...(post ? { 'A malformed Idempotency-Key': INVALID_IDEMPOTENCY_KEY_MESSAGE } : {}),
        ...MALFORMED_EXAMPLE,
      },
    ),
    401: errorResponse(
      `No \`Authorization: Bearer <ADMIN_TOKEN>\`, or another token: always \`${INVALID_ADMIN_TOKEN_MESSAGE}\`.`,
      {
        'WWW-Authenticate': {
          description: `Always \`${ADMIN_WWW_AUTHENTICATE}\`.`,
          type: 'string',
          enum: [ADMIN_WWW_AUTHENTICATE],
          required: true,
        },
      },
      { 'A missing or wrong admin token': INVALID_ADMIN_TOKEN_MESSAGE },
    ),
    404: errorResponse(
      'No such record, or no operation at this path (`No such endpoint: <METHOD> <path>`).',
      {},
      { ...refusals.notFound, 'A path with no operation': noSuchEndpointMessage('GET', '/admin/v1/user') },
    ),
    405: errorResponse(
      'The path does not serve this method: `Method <METHOD> is not allowed on <path>; allowed: <methods>`.',
      { Allow: { description: 'The methods the path serves, like `GET, PATCH, DELETE`.', type: 'string', required: true } },
      { 'A method the path does not serve': methodNotAllowedMessage('PUT', '/admin/v1/users', 'POST, GET') },
    ),
    413: errorResponse(
      'The body is larger than the operation takes (1 MiB); a body declared larger is not read, and the connection is closed.',
      {},
      { 'A body over 1 MiB': bodyTooLargeMessage(DEFAULT_BODY_LIMIT_BYTES) },
    ),
    ...(Object.keys(conflicts).length === 0 ? {} : { 409: errorResponse('The request conflicts with what exists.', {}, conflicts) }),
    ...(post
      ? {
          415: errorResponse(
            `The body is not \`application/json\`, or has no Content-Type: \`${UNSUPPORTED_MEDIA_TYPE_MESSAGE}\`.`,
            {},
            { 'Another content type': UNSUPPORTED_MEDIA_TYPE_MESSAGE },
          ),
          422: errorResponse(
            'The `Idempotency-Key` came with another request (another body, content type or path) within the last 24 hours.',
            {},
            { 'An Idempotency-Key used for another request': IDEMPOTENCY_MISMATCH_MESSAGE },
          ),
        }
      : {}),
  };
}
