import fp from 'fastify-plugin';

/** JSON responses load nothing and may not be framed. */
export const API_CONTENT_SECURITY_POLICY = "default-src 'none'; frame-ancestors 'none'";

declare module 'fastify' {
  interface FastifyContextConfig {
    /** This route's Content-Security-Policy (an HTML page such as /docs); default API_CONTENT_SECURITY_POLICY. */
    contentSecurityPolicy?: string;
  }
}

export interface SecurityHeadersOptions {
  /** HSTS_MAX_AGE, or null: no Strict-Transport-Security. */
  hstsMaxAgeSeconds: number | null;
}

/**
 * Headers fit for a JSON API on every response. A route that serves HTML sets its own policy with
 * `config: { contentSecurityPolicy }`. Strict-Transport-Security is sent only when configured, because
 * only the operator knows that every client reaches the service over HTTPS.
 */
export default fp<SecurityHeadersOptions>(
  async (app, options) => {
    const hsts = options.hstsMaxAgeSeconds === null ? null : `max-age=${options.hstsMaxAgeSeconds}`;
    app.addHook('onRequest', async (request, reply) => {
      reply.header('x-content-type-options', 'nosniff');
      reply.header('referrer-policy', 'no-referrer');
      reply.header('x-frame-options', 'DENY');
      reply.header('content-security-policy', request.routeOptions.config?.contentSecurityPolicy ?? API_CONTENT_SECURITY_POLICY);
      if (hsts) reply.header('strict-transport-security', hsts);
    });
  },
  { name: 'security-headers' },
);
