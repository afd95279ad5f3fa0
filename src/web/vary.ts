import type { FastifyReply } from 'fastify';
import { append } from 'vary';

/**
 * Adds `field` to the reply's `Vary`, keeping what is there: CORS adds `Origin` before the route runs, and a cache
 * that lost it would hand one origin's `Access-Control-Allow-Origin` to another.
 */
export function varyOn(reply: FastifyReply, field: string): FastifyReply {
  const current = reply.getHeader('vary');
  if (current === undefined) return reply.header('vary', field);
  return reply.header('vary', append(Array.isArray(current) ? current.join(', ') : String(current ?? ''), field));
}
