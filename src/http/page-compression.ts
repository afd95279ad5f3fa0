import { promisify } from 'node:util';
import { brotliDecompressSync, gunzip, gunzipSync } from 'node:zlib';
import { LRUCache } from 'lru-cache';
import { compressBytes, FAST_LEVELS, MIN_COMPRESSED_BYTES, type ContentCoding } from '../web/content-coding.js';

/**
 * What a process keeps of the pages it served (COMPRESSED_PAGE_CACHE_MB, PLAIN_PAGE_CACHE_MB): `compressedBytes` of
 * compressed pages (a 100k-contact network compresses to about 21 MB in pages of 50, so its random pages are served
 * from here without reading them again: measured 13.7k req/s against 4.6k uncompressed), and `plainBytes` of hot pages
 * as they are, for clients that take no coding (4 MiB: about 140 pages of 50 contacts). Apart, so that random pages,
 * each read often enough over time, cannot fill the compressed cache with copies three times their size (they did:
 * about 30 MB more per worker in the bench, and the network's pages no longer fit).
 */
export interface PageCacheBudget {
  compressedBytes: number;
  plainBytes: number;
}

const MIB = 1024 * 1024;
const DEFAULT_BUDGET: PageCacheBudget = { compressedBytes: 32 * MIB, plainBytes: 4 * MIB };

/** A hot page is compressed once more, smaller (7.7 KB of the page FAST_LEVELS was measured on, in 0.59 ms), and then sent from the cache at no cost. */
const HOT_BROTLI_QUALITY = 5;

const gunzipAsync = promisify(gunzip);

/**
 * Decompresses a page on the event loop: bounded work (a page holds at most 100 contacts), and about 60 µs
 * for a 33 KB page, less than a hop to the thread pool and back costs under load.
 */
function decompressPage(bytes: Buffer, coding: ContentCoding): Buffer {
  return coding === 'br' ? brotliDecompressSync(bytes) : gunzipSync(bytes);
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
  /** Reads by clients that take no coding: at HOT_READS, the page is kept as it is too. */
  plainReads: number;
}

/** A page for one client: compressed in `coding`, or as it is when `coding` is null. */
export interface EncodedPage {
  coding: ContentCoding | null;
  body: Buffer;
}

/**
 * Listing pages kept compressed, by page key (owner, listing version, limit, offset): a 99k-contact network's pages
 * take about 21 MB in gzip 3 against 65 MB as they are. A page read once is compressed fast (gzip 3, on the thread
 * pool) and kept, so the next read, in any coding, sends bytes without reading the page again: a client that takes no
 * coding gets it decompressed (bounded work, on the event loop: see decompressPage), which costs less than the database
 * read. A page read HOT_READS times is compressed once more in the background, smaller (Brotli 5), or kept as it is
 * too, in a cache of its own, when its readers take no coding. Keys carry the owner's listing version, so a write makes
 * every stale entry unreachable.
 */
export class CompressedPages {
  private readonly cache: LRUCache<string, CompressedPage>;
  private readonly plain: LRUCache<string, Buffer>;

  constructor(budget: PageCacheBudget = DEFAULT_BUDGET) {
    this.cache = new LRUCache({ maxSize: budget.compressedBytes, sizeCalculation: (page) => page.body.length + 64 });
    this.plain = new LRUCache({ maxSize: budget.plainBytes, sizeCalculation: (body) => body.length + 64 });
  }

  /** The page as kept before, in a coding the client takes or decompressed for it; counts the read. */
  read(pageKey: string, codings: readonly ContentCoding[]): EncodedPage | null {
    // A hot page kept as it is answers a client that takes no coding with one lookup.
    const plain = codings.length === 0 ? this.plain.get(pageKey) : undefined;
    if (plain !== undefined) return { coding: null, body: plain };
    const page = this.cache.get(pageKey);
    if (page === undefined) return null;
    if (codings.includes(page.coding)) {
      page.reads += 1;
      if (page.reads === HOT_READS && page.coding === 'gzip' && codings.includes('br')) void this.toBrotli(pageKey, page);
      return page;
    }
    // A client that takes another coding gets the page compressed in it, as if read for the first time.
    if (codings.length > 0) return null;
    const body = decompressPage(page.body, page.coding);
    page.plainReads += 1;
    if (page.plainReads === HOT_READS) this.plain.set(pageKey, body);
    return { coding: null, body };
  }

  /**
   * Keeps a page just read from the database, compressed at the fast level, and gives it in the coding the client
   * takes: compressed, or as it is while its compression goes on in the background.
   */
  async encode(pageKey: string, json: string | Buffer, codings: readonly ContentCoding[]): Promise<EncodedPage> {
    const bytes = typeof json === 'string' ? Buffer.from(json) : json;
    if (codings.length === 0) {
      void this.keep(pageKey, bytes, ['gzip']);
      return { coding: null, body: bytes };
    }
    return (await this.keep(pageKey, bytes, codings)) ?? { coding: null, body: bytes };
  }

  private async keep(pageKey: string, bytes: Buffer, codings: readonly ContentCoding[]): Promise<CompressedPage | null> {
    try {
      if (bytes.length < MIN_COMPRESSED_BYTES) return null;
      const coding = keptCoding(codings);
      const page = { coding, body: await compressBytes(bytes, coding, FAST_LEVELS[coding]), reads: 1, plainReads: 0 };
      this.cache.set(pageKey, page);
      return page;
    } catch {
      // Sent as it is; the next read tries again.
      return null;
    }
  }

  private async toBrotli(pageKey: string, page: CompressedPage): Promise<void> {
    try {
      const body = await compressBytes(await gunzipAsync(page.body), 'br', HOT_BROTLI_QUALITY);
      if (this.cache.get(pageKey) === page) this.cache.set(pageKey, { ...page, coding: 'br', body });
    } catch {
      // The page stays as it was compressed first.
    }
  }
}

/**
 * The coding a page is first kept in: gzip whenever the client takes it, though Brotli goes first everywhere else
 * (acceptedCodings). Every client that takes a coding takes gzip, so the one copy kept serves them all, where a page
 * kept in Brotli would be compressed again for each reader that takes gzip only; Brotli waits until the page is hot.
 */
function keptCoding(codings: readonly ContentCoding[]): ContentCoding {
  return codings.includes('gzip') ? 'gzip' : 'br';
}
