import type { FastifyReply } from 'fastify';

/**
 * Takes the response out of Fastify's hands for a library that writes it itself (oidc-provider),
 * keeping the headers set so far (request id, no-store, security headers).
 */
export function handOverResponse(reply: FastifyReply): void {
  reply.hijack();
  for (const [name, value] of Object.entries(reply.getHeaders())) {
    if (value !== undefined) reply.raw.setHeader(name, value);
  }
}
