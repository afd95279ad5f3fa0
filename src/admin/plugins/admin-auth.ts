import { createHash, timingSafeEqual } from 'node:crypto';
import fp from 'fastify-plugin';
import { extractBearerToken } from '../../auth/authenticator.js';
import { PublicError } from '../../domain/errors.js';

export const INVALID_ADMIN_TOKEN_MESSAGE = 'Missing or invalid admin token';
/** How a 401 tells the caller which credentials to send (RFC 6750): the admin token, not a user's key. */
export const ADMIN_WWW_AUTHENTICATE = 'Bearer realm="contacts-admin"';

export interface AdminAuthOptions {
  /** ADMIN_TOKEN. */
  token: string;
}

const digest = (text: string) => createHash('sha256').update(text, 'utf8').digest();

/**
 * Every request to a route must carry `Authorization: Bearer <ADMIN_TOKEN>`; anything else is a 401 that says nothing
 * more. The comparison is of SHA-256 digests in constant time, so neither the token's length nor how much of it a
 * guess got right shows in the time an answer takes. Registered after the request guards: an unknown path is a 404
 * before any token is looked at, as on the public API.
 */
export default fp<AdminAuthOptions>(
  async (app, { token }) => {
    const expected = digest(token);
    app.addHook('onRequest', async (request) => {
      const given = extractBearerToken(request.headers.authorization);
      if (given === null || !timingSafeEqual(digest(given), expected)) {
        throw new PublicError(401, INVALID_ADMIN_TOKEN_MESSAGE, { headers: { 'www-authenticate': ADMIN_WWW_AUTHENTICATE } });
      }
    });
  },
  { name: 'admin-auth' },
);
