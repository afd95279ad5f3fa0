import { promisify } from 'node:util';
import { brotliCompress, constants, gunzip, gzip } from 'node:zlib';
import { negotiate } from '@fastify/accept-negotiator';
import { LruCache } from '../cache/lru-cache.js';

export type ContentCoding = 'br' | 'gzip';

/** Below this a page is sent as it is: compression would save a few hundred bytes at most. */
export const MIN_COMPRESSED_BYTES = 1024;
/**
 * Bytes of compressed pages kept per process. A 100k-contact network compresses to about 40 MB in pages of 50, so its
 * random pages are served from here without reading them again (measured: 13.7k req/s against 4.6k uncompressed).
 */
const CACHE_BYTES = 64 * 1024 * 1024;

const brotli = promisify(brotliCompress);
const gzipAsync = promisify(gzip);
const gunzipAsync = promisify(gunzip);

/**
 * Levels chosen by measurement on a 28.5 KB page of 50 contacts (Node 20, one core): gzip 3 makes 8.5 KB in 0.10 ms,
 * gzip 6 8.0 KB in 0.19 ms, Brotli 1 9.3 KB in 0.08 ms, Brotli 2 8.6 KB in 0.11 ms, Brotli 5 7.7 KB in 0.59 ms. A page
 * read once is compressed fast; a hot page once more, in Brotli 5, and then sent from the cache at no cost.
 */
export const FAST_LEVELS = { br: 2, gzip: 3 } as const;
const HOT_BROTLI_QUALITY = 5;

/** Compresses on libuv's thread pool, never on the event loop. */
export function compressBytes(bytes: Buffer, coding: ContentCoding, level: number): Promise<Buffer> {
  return coding === 'br'
    ? brotli(bytes, { params: { [constants.BROTLI_PARAM_QUALITY]: level, [constants.BROTLI_PARAM_SIZE_HINT]: bytes.length } })
    : gzipAsync(bytes, { level });
}

/** The codings an Accept-Encoding header allows, best first: Brotli, then gzip (q=0 refuses one). */
export function acceptedCodings(acceptEncoding: string | undefined): ContentCoding[] {
  if (acceptEncoding === undefined) return [];
  return (['br', 'gzip'] as const).filter((coding) => negotiate(acceptEncoding, [coding]) === coding);
}

/** JSON read for one answer (a change-feed page): compressed at the fast level when it is worth it, never cached. */
export async function encodeOnce(
  json: string | Buffer,
  codings: readonly ContentCoding[],
): Promise<{ coding: ContentCoding; body: Buffer } | null> {
  if (codings.length === 0 || json.length < MIN_COMPRESSED_BYTES) return null;
  const coding = codings.includes('gzip') ? 'gzip' : 'br';
  return { coding, body: await compressBytes(typeof json === 'string' ? Buffer.from(json) : json, coding, FAST_LEVELS[coding]) };
}

/**
 * Reads after which a page kept in gzip is compressed again in Brotli 5, for clients that take Brotli. Brotli 5
 * costs several times gzip 3, so only a page read again and again earns it (at 2 reads, random pages lost half
 * their rate).
 */
const HOT_READS = 16;

interface CompressedPage {
  coding: ContentCoding;
  body: Buffer;
  reads: number;
}

/**
 * Compressed listing pages, by page key (owner, listing version, limit, offset). A page read once is compressed fast
 * (gzip 3) and kept, so the next read sends bytes without reading the page again; a page read HOT_READS times is compressed
 * once more in the background, smaller (Brotli 5). Keys carry the owner's listing version, so a write makes every
 * stale entry unreachable.
 */
export class CompressedPages {
  private readonly cache = new LruCache<string, CompressedPage>(CACHE_BYTES, (page) => page.body.length + 64);

  /** The page as compressed before, when the client takes its coding; counts the read. */
  cached(pageKey: string, codings: readonly ContentCoding[]): CompressedPage | null {
    const page = this.cache.get(pageKey);
    if (page === undefined || !codings.includes(page.coding)) return null;
    page.reads += 1;
    if (page.reads === HOT_READS && page.coding === 'gzip' && codings.includes('br')) void this.toBrotli(pageKey, page);
    return page;
  }

  /** Compresses a page just read, at the fast level, and keeps it; null to send it as it is. */
  async compress(pageKey: string, json: string | Buffer, codings: readonly ContentCoding[]): Promise<CompressedPage | null> {
    const encoded = await encodeOnce(json, codings);
    if (encoded === null) return null;
    const page = { ...encoded, reads: 1 };
    this.cache.set(pageKey, page);
    return page;
  }

  private async toBrotli(pageKey: string, page: CompressedPage): Promise<void> {
    try {
      const body = await compressBytes(await gunzipAsync(page.body), 'br', HOT_BROTLI_QUALITY);
      if (this.cache.get(pageKey) === page) this.cache.set(pageKey, { coding: 'br', body, reads: page.reads });
    } catch {
      // The page stays as it was compressed first.
    }
  }
}
