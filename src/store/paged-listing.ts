import { setImmediate as yieldToEventLoop } from 'node:timers/promises';
import { LRUCache } from 'lru-cache';
import { pageDocumentJson, paginationOf, type PageRequest, type SortKey } from '../domain/pagination.js';
import type { ContactPageJson } from './contracts/contact-store.js';

/**
 * An owner's listing state, maintained by the database itself (triggers): the number of listable contacts,
 * and a version that changes with every write to any of the owner's contacts.
 */
export interface ListingState {
  version: number;
  total: number;
}

/** What a database must answer for the paged listing; each call reads one consistent snapshot. */
export interface PageSource {
  state(ownerId: string): Promise<ListingState>;
  /**
   * Up to `count` sort keys `stride` positions apart, with the state they belong to: at positions stride, 2·stride, …
   * counted from `after` (position 0), or at positions 0, stride, … of the owner's listing when `after` is null.
   */
  sortKeys(ownerId: string, stride: number, after: SortKey | null, count: number): Promise<{ state: ListingState; keys: SortKey[] }>;
  /** Up to `limit` contacts as a JSON array, skipping `skip` listable contacts from `from` (inclusive) or the start. */
  page(
    ownerId: string,
    from: SortKey | null,
    skip: number,
    limit: number,
  ): Promise<{ state: ListingState; data: string; returned: number }>;
}

export interface PagedListingOptions {
  /** Distance between remembered sort keys: no page skips more than this many index entries. */
  stride?: number;
  /** Owners whose sort keys are remembered. */
  maxOwners?: number;
  /**
   * Bytes of page documents kept, keyed by owner version (default 4 MiB): the hot pages. The HTTP layer keeps every
   * page it serves compressed, and serves them from there.
   */
  pageCacheBytes?: number;
  /**
   * How long an owner's state (version and total) is reused before the database is asked again, in ms; 0 (the
   * default) asks on every read. Within it, a cached page may be served for a state just replaced: writes become
   * visible within this bound.
   */
  stateTtlMs?: number;
  now?: () => number;
}

/** The sort keys remembered for one version of an owner's listing, found chunk by chunk as deeper offsets ask. */
interface Anchors {
  version: number;
  keys: SortKey[];
  /** The listing holds no key past the last one. */
  complete: boolean;
  /** The chunk being read now, which every read that needs it awaits: false when the version moved meanwhile. */
  extending: Promise<boolean> | null;
}

/**
 * Sort keys read at a time: each chunk is one short read (50 keys of stride 200 are 10,000 index steps), and the
 * event loop runs between chunks, so a network of millions never holds it (SQLite reads on the event loop).
 */
const KEYS_PER_CHUNK = 50;

const EMPTY_DATA = '[]';
/**
 * Pages read once lately, remembered by key only: a page enters the cache on its second read among these, so a
 * walk or random reads over a large network don't churn it. Each cached page outlives young-generation GC, and
 * churning them costs full collections, whose pauses would land in the tail latency of every other read.
 */
const RECENTLY_READ_ONCE = 64;
/**
 * Reads of a cached page after which it is kept as UTF-8 bytes instead of text: bytes go to the socket without
 * encoding, but V8 counts them as external memory, which it collects with full GCs only. Converting just the pages
 * read again and again keeps that cost off pages that pass through the cache.
 */
const HOT_READS = 8;

interface CachedPage extends ContactPageJson {
  reads: number;
}

const weightOf = (page: CachedPage) => (typeof page.json === 'string' ? page.json.length * 2 : page.json.length) + 128;
const ATTEMPTS = 3;

/**
 * Makes every offset cost about what the first page costs. The owner's total and version come from one
 * indexed row the database maintains, so counting never scans the network. Sort keys remembered every
 * `stride` positions turn any offset into a keyset seek plus a short skip; they are read as deep as reads go and no
 * deeper, so a write costs the next deep read only the chunks it needs. Pages are cached by owner version,
 * which any write to the owner's contacts changes — including direct SQL by another process, since the
 * database's own triggers bump it — so a cached page is never served for a state it does not belong to.
 */
export class PagedListing {
  private readonly stride: number;
  private readonly anchors: LRUCache<string, Anchors>;
  private readonly pages: LRUCache<string, CachedPage>;
  private readonly readOnce = new LRUCache<string, true>({ max: RECENTLY_READ_ONCE });
  private readonly states: LRUCache<string, { state: ListingState; until: number }>;
  private readonly stateTtlMs: number;
  private readonly now: () => number;

  constructor(
    private readonly source: PageSource,
    options: PagedListingOptions = {},
  ) {
    this.stride = options.stride ?? 200;
    this.anchors = new LRUCache({ max: options.maxOwners ?? 2000 });
    this.states = new LRUCache({ max: options.maxOwners ?? 2000 });
    this.pages = new LRUCache({ maxSize: options.pageCacheBytes ?? 4 * 1024 * 1024, sizeCalculation: weightOf });
    this.stateTtlMs = options.stateTtlMs ?? 0;
    this.now = options.now ?? Date.now;
  }

  async read(ownerId: string, page: PageRequest): Promise<ContactPageJson> {
    for (let attempt = 0; attempt < ATTEMPTS; attempt += 1) {
      // A retry means the database moved past the state in hand: it must not come from the cache again.
      const state = await this.stateOf(ownerId, attempt > 0);
      if (page.offset >= state.total) return documentOf(page, EMPTY_DATA, 0, state);
      const cacheKey = `${ownerId}:${state.version}:${page.limit}:${page.offset}`;
      const cached = this.pages.get(cacheKey);
      if (cached) return this.hit(cacheKey, cached);

      const start = await this.seekPoint(ownerId, state, page.offset);
      if (start === null) continue;
      const result = await this.source.page(ownerId, start.from, start.skip, page.limit);
      // A write between the two reads changed the listing: the seek point may belong to another state.
      if (result.state.version !== state.version) continue;
      const document = documentOf(page, result.data, result.returned, state);
      this.admit(cacheKey, document);
      return document;
    }
    // Under a storm of writes, one plain OFFSET read is still correct: page and total share its snapshot.
    const result = await this.source.page(ownerId, null, page.offset, page.limit);
    return documentOf(page, result.data, result.returned, result.state);
  }

  /** The owner's version as read() would use it now (the same cached state). */
  async version(ownerId: string): Promise<number> {
    return (await this.stateOf(ownerId, false)).version;
  }

  private admit(cacheKey: string, document: ContactPageJson): void {
    if (this.readOnce.get(cacheKey) === undefined) {
      this.readOnce.set(cacheKey, true);
      return;
    }
    this.readOnce.delete(cacheKey);
    this.pages.set(cacheKey, { ...document, reads: 0 });
  }

  private hit(cacheKey: string, cached: CachedPage): ContactPageJson {
    cached.reads += 1;
    if (cached.reads !== HOT_READS || typeof cached.json !== 'string') return cached;
    const hot = { ...cached, json: Buffer.from(cached.json) };
    this.pages.set(cacheKey, hot);
    return hot;
  }

  private async stateOf(ownerId: string, fresh: boolean): Promise<ListingState> {
    if (this.stateTtlMs === 0) return this.source.state(ownerId);
    const at = this.now();
    const cached = fresh ? undefined : this.states.get(ownerId);
    if (cached !== undefined && cached.until > at) return cached.state;
    const state = await this.source.state(ownerId);
    this.states.set(ownerId, { state, until: at + this.stateTtlMs });
    return state;
  }

  private async seekPoint(ownerId: string, state: ListingState, offset: number): Promise<{ from: SortKey | null; skip: number } | null> {
    if (offset < this.stride) return { from: null, skip: offset };
    let anchors = this.anchors.get(ownerId);
    if (anchors?.version !== state.version) {
      anchors = { version: state.version, keys: [], complete: false, extending: null };
      this.anchors.set(ownerId, anchors);
    }
    const wanted = Math.floor(offset / this.stride);
    while (anchors.keys.length <= wanted && !anchors.complete) {
      if (!(await this.extend(ownerId, anchors))) return null;
    }
    if (anchors.keys.length === 0) return null;
    const index = Math.min(wanted, anchors.keys.length - 1);
    return { from: anchors.keys[index]!, skip: offset - index * this.stride };
  }

  /** Reads the next chunk of sort keys once, however many reads wait for it. */
  private extend(ownerId: string, anchors: Anchors): Promise<boolean> {
    anchors.extending ??= (async () => {
      try {
        if (anchors.keys.length > 0) await yieldToEventLoop();
        const chunk = await this.source.sortKeys(ownerId, this.stride, anchors.keys.at(-1) ?? null, KEYS_PER_CHUNK);
        if (chunk.state.version !== anchors.version) return false;
        anchors.keys.push(...chunk.keys);
        anchors.complete = chunk.keys.length < KEYS_PER_CHUNK;
        return true;
      } finally {
        anchors.extending = null;
      }
    })();
    return anchors.extending;
  }
}

function documentOf(page: PageRequest, data: string, returned: number, state: ListingState): ContactPageJson {
  const json = pageDocumentJson(data, paginationOf(page, returned, state.total));
  return { json, returned, total: state.total, version: state.version };
}

/** The parsed form of a JSON page, for callers that want objects (agents, the CLI). */
export function parsePageJson<T>(page: ContactPageJson): { contacts: T[]; total: number } {
  const text = typeof page.json === 'string' ? page.json : page.json.toString();
  return { contacts: (JSON.parse(text) as { data: T[] }).data, total: page.total };
}
