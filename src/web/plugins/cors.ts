import cors from '@fastify/cors';
import fp from 'fastify-plugin';

/** Response headers a browser client may read: entity tags, rate limits, Retry-After and the request id. */
export const CORS_EXPOSED_HEADERS = [
  'ETag',
  'RateLimit',
  'RateLimit-Policy',
  'Retry-After',
  'WWW-Authenticate',
  'X-RateLimit-Limit',
  'X-RateLimit-Remaining',
  'X-RateLimit-Reset',
  'X-Request-Id',
];

export interface CorsOptions {
  /** CORS_ORIGINS: the origins, exactly as browsers send them. */
  origins: readonly string[];
}

/**
 * Lets browsers on the listed origins (exact matches, CORS_ORIGINS) call the API; with none listed no
 * CORS header is ever sent, so browsers keep the same-origin policy. Keys travel in Authorization, not
 * cookies, so credentials are never allowed.
 */
export default fp<CorsOptions>(
  async (app, { origins }) => {
    if (origins.length === 0) return;
    await app.register(cors, {
      origin: [...origins],
      methods: ['GET', 'HEAD', 'POST'],
      allowedHeaders: ['Authorization', 'Content-Type', 'Accept', 'Mcp-Protocol-Version', 'X-Request-Id', 'If-None-Match'],
      exposedHeaders: CORS_EXPOSED_HEADERS,
      credentials: false,
      maxAge: 600,
      // A bare OPTIONS gets an empty 204 rather than a plain-text 400: every error body here is JSON.
      strictPreflight: false,
    });
  },
  { name: 'cors' },
);
