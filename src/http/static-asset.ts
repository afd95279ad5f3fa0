import type { FastifyReply, FastifyRequest } from 'fastify';
import { codedEtag, contentEtag, notModifiedInAnyCoding } from '../web/conditional.js';
import { acceptedCodings, compressBytes, type ContentCoding } from '../web/content-coding.js';
import { varyOn } from '../web/vary.js';

/** Fixed content with its tag, and the same content in each coding it was compressed in. */
export interface StaticAsset {
  body: Buffer;
  etag: string;
  variants: Partial<Record<ContentCoding, Buffer>>;
}

/** Levels for content compressed once, at start or at first use: Brotli 9 and gzip 9 take a few ms for 100 KB. */
const ONCE = { br: 9, gzip: 9 } as const;

/** Makes an asset, compressing it in both codings unless `variants` were made already (at build time). */
export async function staticAsset(body: Buffer, variants?: StaticAsset['variants']): Promise<StaticAsset> {
  const [br, gzip] = variants
    ? [variants.br, variants.gzip]
    : await Promise.all([compressBytes(body, 'br', ONCE.br), compressBytes(body, 'gzip', ONCE.gzip)]);
  return { body, etag: contentEtag(body), variants: { ...(br ? { br } : {}), ...(gzip ? { gzip } : {}) } };
}

/** Sends the asset in the best coding the client takes, with Vary and the coding's tag, or 304 to any of its tags. */
export function sendAsset(request: FastifyRequest, reply: FastifyReply, asset: StaticAsset): FastifyReply {
  varyOn(reply, 'Accept-Encoding');
  if (notModifiedInAnyCoding(request, reply, asset.etag)) return reply;
  const coding = acceptedCodings(request.headers['accept-encoding']).find((candidate) => asset.variants[candidate] !== undefined);
  if (coding === undefined) return reply.header('etag', asset.etag).send(asset.body);
  return reply.header('content-encoding', coding).header('etag', codedEtag(asset.etag, coding)).send(asset.variants[coding]);
}
