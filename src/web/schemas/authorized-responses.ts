import { INVALID_KEY_MESSAGE, missingScopeMessage, PRO_PLAN_REQUIRED_MESSAGE, WWW_AUTHENTICATE } from '../../auth/authenticator.js';
import { AUTH_FAILURES_EXCEEDED_MESSAGE, RATE_LIMIT_EXCEEDED_MESSAGE } from '../../domain/rate-limit.js';
import { CONTACTS_READ } from '../../domain/scopes.js';
import { errorResponse } from './common.js';
import { EVERY_OPERATION_RESPONSES } from './every-operation-responses.js';
import { RETRY_AFTER_HEADER, SOMETIMES_RATE_LIMIT_HEADERS } from './rate-limit-headers.js';

/** The responses every route behind the authorization hook may give besides its own: key, scope, plan, rate limits. */
export const AUTHORIZED_ERROR_RESPONSES = {
  ...EVERY_OPERATION_RESPONSES,
  401: errorResponse(
    `Missing, malformed, unknown, revoked or expired key: always \`${INVALID_KEY_MESSAGE}\`.`,
    { 'WWW-Authenticate': { description: `Always \`${WWW_AUTHENTICATE}\`.`, type: 'string', enum: [WWW_AUTHENTICATE], required: true } },
    { 'Any key the API does not accept': INVALID_KEY_MESSAGE },
  ),
  403: errorResponse(
    `The key lacks \`${CONTACTS_READ}\` (\`${missingScopeMessage(CONTACTS_READ)}\`), or its user is not on the Pro plan (\`${PRO_PLAN_REQUIRED_MESSAGE}\`).`,
    {},
    { 'A key without the scope': missingScopeMessage(CONTACTS_READ), 'A user not on the Pro plan': PRO_PLAN_REQUIRED_MESSAGE },
  ),
  429: errorResponse(
    [
      `The key made more requests this minute than its rate limit allows: \`${RATE_LIMIT_EXCEEDED_MESSAGE}\`, with the rate-limit headers; requests refused with 401 or 403 do not count.`,
      `Or this client address sent credentials that failed (401) more times this minute than the service allows: \`${AUTH_FAILURES_EXCEEDED_MESSAGE}\`, without them;`,
      'every request from the address is then refused before its key is read, a valid one too, until the window resets.',
      'Retry after `Retry-After` seconds.',
    ].join(' '),
    { ...RETRY_AFTER_HEADER, ...SOMETIMES_RATE_LIMIT_HEADERS },
    {
      'Over the rate limit': RATE_LIMIT_EXCEEDED_MESSAGE,
      'Too many failed authentications from this address': AUTH_FAILURES_EXCEEDED_MESSAGE,
    },
  ),
} as const;
