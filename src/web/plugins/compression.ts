import type { FastifyReply, FastifyRequest } from 'fastify';
import fp from 'fastify-plugin';
import { pipeline, Readable } from 'node:stream';
import { acceptedCodings, compressBytes, compressingStream, FAST_LEVELS, MIN_COMPRESSED_BYTES } from '../content-coding.js';
import { varyOn } from '../vary.js';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** Whether the compression plugin compresses this route's answers; the listing and static assets code their own. */
    compress?: boolean;
  }
}

/**
 * One onSend hook compresses the answers of every route that asks (`config: { compress: true }`), as hono's compress
 * middleware does: each answer says `Vary: Accept-Encoding`, and a body of MIN_COMPRESSED_BYTES or more goes in the
 * best coding Accept-Encoding allows (acceptedCodings), at the fast levels, on the thread pool. The listing's page
 * cache (page-compression.ts) and the static assets (static-asset.ts) code their own bytes and do not ask.
 */
export default fp(
  async (app) => {
    app.addHook('onRoute', (route) => {
      if (route.config?.compress) route.onSend = [route.onSend ?? []].flat().concat(compressAnswer);
    });
  },
  { name: 'compression' },
);

/**
 * Compresses a whole body (the JSON routes send theirs whole) or a stream as it flows (a CardDAV multistatus of
 * thousands of cards is streamed). A 304 has no body, nor has a HEAD answer here (Fastify's HEAD hook is in the
 * route's options before onRoute adds this one after it), and a body already coded goes as it is.
 */
async function compressAnswer(request: FastifyRequest, reply: FastifyReply, payload: unknown): Promise<unknown> {
  varyOn(reply, 'Accept-Encoding');
  const whole = typeof payload === 'string' || Buffer.isBuffer(payload);
  if (!whole && !(payload instanceof Readable)) return payload;
  const coding = acceptedCodings(request.headers['accept-encoding'])[0];
  if (coding === undefined || reply.hasHeader('content-encoding')) return payload;
  if (whole && Buffer.byteLength(payload) < MIN_COMPRESSED_BYTES) return payload;
  reply.header('content-encoding', coding);
  if (!whole) {
    reply.removeHeader('content-length');
    // An error on either side ends both: the client sees a cut answer, as it would without compression.
    return pipeline(payload, compressingStream(coding, FAST_LEVELS[coding]), () => undefined);
  }
  return compressBytes(typeof payload === 'string' ? Buffer.from(payload) : payload, coding, FAST_LEVELS[coding]);
}
