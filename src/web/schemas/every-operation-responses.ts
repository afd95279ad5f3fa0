import { BODY_READ_TIMEOUT_MESSAGE } from '../body-read-timeout.js';
import { REQUEST_TIMEOUT_MESSAGE } from '../errors.js';
import { HEADERS_TOO_LARGE_MESSAGE, MALFORMED_REQUEST_MESSAGE } from '../client-error.js';
import { bodyTooLargeMessage, DEFAULT_BODY_LIMIT_BYTES } from '../body-size.js';
import { methodNotAllowedMessage, noSuchEndpointMessage } from '../method-not-allowed.js';
import { MISSING_HOST_MESSAGE, SEVERAL_HOSTS_MESSAGE } from '../host-header.js';
import { DATABASE_BUSY_MESSAGE, INTERNAL_ERROR_MESSAGE, SERVER_BUSY_MESSAGE } from '../../domain/errors.js';
import { errorResponse } from './common.js';

/** Said of every 400: what the HTTP layer refuses before a route reads the request. */
export const MALFORMED_REQUEST = 'The request itself is malformed: no `Host` header, several, or an unparseable request line.';

/** The 400 every operation may give, named once for the operations that add their own reasons to it. */
export const MALFORMED_EXAMPLE = {
  'An HTTP/1.1 request without a Host header': MISSING_HOST_MESSAGE,
  'Two Host headers': SEVERAL_HOSTS_MESSAGE,
  'An unparseable request line': MALFORMED_REQUEST_MESSAGE,
};

/**
 * What any operation may answer, whatever it does: the HTTP layer's refusals before and around a route. Declared on
 * every operation, so clients see each body and validators can check each answer.
 */
export const EVERY_OPERATION_RESPONSES = {
  400: errorResponse(MALFORMED_REQUEST, {}, MALFORMED_EXAMPLE),
  404: errorResponse(
    'No operation at this path: `No such endpoint: <METHOD> <path>`.',
    {},
    { 'A path with no operation': noSuchEndpointMessage('GET', '/api/v1/contact') },
  ),
  405: errorResponse(
    'The path does not serve this method: `Method <METHOD> is not allowed on <path>; allowed: <methods>`.',
    { Allow: { description: 'The methods the path serves, like `GET, HEAD`.', type: 'string', required: true } },
    { 'A method the path does not serve': methodNotAllowedMessage('DELETE', '/api/v1/contacts', 'GET, HEAD') },
  ),
  408: errorResponse(
    `The request was not received in time: its line and headers within the request timeout (\`${REQUEST_TIMEOUT_MESSAGE}\`), or its body stalled (no byte for BODY_READ_TIMEOUT_MS) or arrived too slowly (\`${BODY_READ_TIMEOUT_MESSAGE}\`). The connection is closed.`,
    {},
    {
      'A client too slow to send its headers': REQUEST_TIMEOUT_MESSAGE,
      'A body that stalls or trickles': BODY_READ_TIMEOUT_MESSAGE,
    },
  ),
  413: errorResponse(
    'The request declares a body larger than the operation takes (1 MiB for a `GET`); it is not read, and the connection is closed.',
    {},
    { 'A GET that declares a body over 1 MiB': bodyTooLargeMessage(DEFAULT_BODY_LIMIT_BYTES) },
  ),
  431: errorResponse(
    `\`${HEADERS_TOO_LARGE_MESSAGE}\`. The connection is closed.`,
    {},
    { 'Headers over 16 KB': HEADERS_TOO_LARGE_MESSAGE },
  ),
  500: errorResponse(
    'Server error; temporary. The body never carries internals.',
    {},
    { 'Any unexpected failure': INTERNAL_ERROR_MESSAGE },
  ),
  503: errorResponse(
    `Temporarily unavailable: the database is down or did not answer in time, the answer took longer than the request timeout (\`Request timed out\`), too many requests already wait for the database (\`${DATABASE_BUSY_MESSAGE}\`, with \`Retry-After\`), or the server already has as many requests in progress as it takes (\`${SERVER_BUSY_MESSAGE}\`, with \`Retry-After\`; never on \`/healthz\` and \`/readyz\`). Retry with backoff.`,
    { 'Retry-After': { description: 'Seconds to wait, when the database or the server is busy.', type: 'integer' } },
    {
      'An answer slower than the request timeout': REQUEST_TIMEOUT_MESSAGE,
      'Too many requests waiting for the database': DATABASE_BUSY_MESSAGE,
      'Too many requests in progress in the server': SERVER_BUSY_MESSAGE,
    },
  ),
} as const;
