import { REQUEST_TIMEOUT_MESSAGE } from '../errors.js';
import { HEADERS_TOO_LARGE_MESSAGE } from '../client-error.js';
import { DATABASE_BUSY_MESSAGE } from '../../domain/errors.js';
import { errorResponse } from './common.js';

/** Said of every 400: what the HTTP layer refuses before a route reads the request. */
export const MALFORMED_REQUEST = 'The request itself is malformed: no `Host` header, several, or an unparseable request line.';

/**
 * What any operation may answer, whatever it does: the HTTP layer's refusals before and around a route. Declared on
 * every operation, so clients see each body and validators can check each answer.
 */
export const EVERY_OPERATION_RESPONSES = {
  400: errorResponse(MALFORMED_REQUEST),
  404: errorResponse('No operation at this path: `No such endpoint: <METHOD> <path>`.'),
  405: errorResponse('The path does not serve this method: `Method <METHOD> is not allowed on <path>; allowed: <methods>`.', {
    Allow: { description: 'The methods the path serves, like `GET, HEAD`.', type: 'string', required: true },
  }),
  408: errorResponse(`The request was not received within the request timeout: \`${REQUEST_TIMEOUT_MESSAGE}\`. The connection is closed.`),
  413: errorResponse(
    'The request declares a body larger than the operation takes (1 MiB for a `GET`); it is not read, and the connection is closed.',
  ),
  431: errorResponse(`\`${HEADERS_TOO_LARGE_MESSAGE}\`. The connection is closed.`),
  500: errorResponse('Server error; temporary. The body never carries internals.'),
  503: errorResponse(
    `Temporarily unavailable: the database is down or did not answer in time, the answer took longer than the request timeout (\`Request timed out\`), or too many requests already wait for the database (\`${DATABASE_BUSY_MESSAGE}\`, with \`Retry-After\`). Retry with backoff.`,
    { 'Retry-After': { description: 'Seconds to wait, when the database is busy.', type: 'integer' } },
  ),
} as const;
