import { promisify } from 'node:util';
import type { Transform } from 'node:stream';
import { brotliCompress, constants, createBrotliCompress, createGzip, gzip } from 'node:zlib';
import { negotiate } from '@fastify/accept-negotiator';

export type ContentCoding = 'br' | 'gzip';

/** Below this a body is sent as it is: compression would save a few hundred bytes at most. */
export const MIN_COMPRESSED_BYTES = 1024;

/**
 * Levels for bytes compressed as they are sent, chosen by measurement on a 28.5 KB page of 50 contacts (Node 20, one
 * core): gzip 3 makes 8.5 KB in 0.10 ms, gzip 6 8.0 KB in 0.19 ms, Brotli 1 9.3 KB in 0.08 ms, Brotli 2 8.6 KB in
 * 0.11 ms, Brotli 5 7.7 KB in 0.59 ms.
 */
export const FAST_LEVELS = { br: 2, gzip: 3 } as const;

const brotli = promisify(brotliCompress);
const gzipAsync = promisify(gzip);

/** Compresses on libuv's thread pool, never on the event loop. */
export function compressBytes(bytes: Buffer, coding: ContentCoding, level: number): Promise<Buffer> {
  return coding === 'br'
    ? brotli(bytes, { params: { [constants.BROTLI_PARAM_QUALITY]: level, [constants.BROTLI_PARAM_SIZE_HINT]: bytes.length } })
    : gzipAsync(bytes, { level });
}

/** A compressing stream for a body sent as it is made (a long multistatus); zlib works on the thread pool. */
export function compressingStream(coding: ContentCoding, level: number): Transform {
  return coding === 'br' ? createBrotliCompress({ params: { [constants.BROTLI_PARAM_QUALITY]: level } }) : createGzip({ level });
}

/**
 * The codings an Accept-Encoding header allows (q=0 refuses one), best first: Brotli, then gzip. Brotli is the smaller
 * at every level used here: at the fast levels by 2-3% in the same time (a 65 KB change-feed page, a 62 KB MCP answer),
 * and by a sixth for the docs bundle compressed at build time. Only the listing's page cache keeps gzip first, for a
 * reason of its own (CompressedPages).
 */
export function acceptedCodings(acceptEncoding: string | undefined): ContentCoding[] {
  if (acceptEncoding === undefined) return [];
  return (['br', 'gzip'] as const).filter((coding) => negotiate(acceptEncoding, [coding]) === coding);
}
