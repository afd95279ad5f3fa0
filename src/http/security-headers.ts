import type { FastifyInstance } from 'fastify';

/** JSON responses load nothing and may not be framed. */
export const API_CONTENT_SECURITY_POLICY = "default-src 'none'; frame-ancestors 'none'";

declare module 'fastify' {
  interface FastifyContextConfig {
    /** This route's Content-Security-Policy (an HTML page such as /docs); default API_CONTENT_SECURITY_POLICY. */
    contentSecurityPolicy?: string;
  }
}

/**
 * Headers fit for a JSON API on every response. A route that serves HTML sets its own policy with
 * `config: { contentSecurityPolicy }`. Strict-Transport-Security is sent only when configured, because
 * only the operator knows that every client reaches the service over HTTPS.
 */
export function addSecurityHeaders(app: FastifyInstance, options: { hstsMaxAgeSeconds: number | null }): void {
  const hsts = options.hstsMaxAgeSeconds === null ? null : `max-age=${options.hstsMaxAgeSeconds}`;
  app.addHook('onRequest', async (request, reply) => {
    reply.header('x-content-type-options', 'nosniff');
    reply.header('referrer-policy', 'no-referrer');
    reply.header('x-frame-options', 'DENY');
    reply.header('content-security-policy', request.routeOptions.config?.contentSecurityPolicy ?? API_CONTENT_SECURITY_POLICY);
    if (hsts) reply.header('strict-transport-security', hsts);
  });
}
