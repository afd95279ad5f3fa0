import type { IncomingMessage, ServerResponse } from 'node:http';
import fp from 'fastify-plugin';
import { referrerPolicy, strictTransportSecurity, xContentTypeOptions, xFrameOptions } from 'helmet';

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

type HelmetMiddleware = (request: IncomingMessage, response: ServerResponse, next: () => void) => void;
type Header = readonly [name: string, value: string];

/**
 * The headers helmet's middleware would set, taken once at start-up from a stand-in response: every request then pays
 * for a few `reply.header` calls only, as Fastify headers (so an error's answer keeps them, and a raw answer gets none).
 */
function headersOf(middleware: HelmetMiddleware): Header[] {
  const headers: Header[] = [];
  const response = { setHeader: (name: string, value: string) => headers.push([name.toLowerCase(), value]) };
  middleware({} as IncomingMessage, response as unknown as ServerResponse, () => {});
  return headers;
}

/**
 * Headers fit for a JSON API on every response, helmet's (no sniffing, no referrer, no framing) in the order the API
 * has always sent them. A route that serves HTML sets its own policy with `config: { contentSecurityPolicy }` (helmet
 * writes a policy with `;` alone between directives, ours keeps `; `). Strict-Transport-Security is sent only when
 * configured, because only the operator knows that every client reaches the service over HTTPS.
 */
export default fp<SecurityHeadersOptions>(
  async (app, { hstsMaxAgeSeconds }) => {
    const always = [xContentTypeOptions(), referrerPolicy({ policy: 'no-referrer' }), xFrameOptions({ action: 'deny' })].flatMap(headersOf);
    const hsts =
      hstsMaxAgeSeconds === null ? [] : headersOf(strictTransportSecurity({ maxAge: hstsMaxAgeSeconds, includeSubDomains: false }));
    app.addHook('onRequest', (request, reply, done) => {
      for (const [name, value] of always) reply.header(name, value);
      reply.header('content-security-policy', request.routeOptions.config?.contentSecurityPolicy ?? API_CONTENT_SECURITY_POLICY);
      for (const [name, value] of hsts) reply.header(name, value);
      done();
    });
  },
  { name: 'security-headers' },
);
