import { WWW_AUTHENTICATE } from '../../auth/authenticator.js';
import { errorResponse } from './common.js';
import { EVERY_OPERATION_RESPONSES } from './every-operation-responses.js';
import { RATE_LIMIT_HEADERS, RETRY_AFTER_HEADER } from './rate-limit-headers.js';

/** The responses every route behind the authorization hook may give besides its own: key, scope, plan, rate limit. */
export const AUTHORIZED_ERROR_RESPONSES = {
  ...EVERY_OPERATION_RESPONSES,
  401: errorResponse('Missing, malformed, unknown, revoked or expired key: always `Invalid or inactive API key`.', {
    'WWW-Authenticate': { description: `Always \`${WWW_AUTHENTICATE}\`.`, type: 'string', enum: [WWW_AUTHENTICATE], required: true },
  }),
  403: errorResponse(
    'The key lacks `contacts:read` (`API key lacks contacts:read`), or its user is not on the Pro plan (`API access requires a Pro plan`).',
  ),
  429: errorResponse(
    'The key made more requests this minute than its rate limit allows: `Rate limit exceeded`. Retry after `Retry-After` seconds. Requests refused with 401 or 403 do not count.',
    { ...RETRY_AFTER_HEADER, ...RATE_LIMIT_HEADERS },
  ),
} as const;
