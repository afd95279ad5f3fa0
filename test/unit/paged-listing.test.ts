import { describe, expect, it } from 'vitest';
import type { SortKey } from '../../src/domain/pagination.js';
import { PagedListing, type ListingState, type PageSource } from '../../src/store/paged-listing.js';

/** A listing of `n` rows in memory; `version` changes on demand, and every call is recorded. */
function memorySource(n: number) {
  const rows: SortKey[] = Array.from({ length: n }, (_, i) => ({
    created_at: `2024-01-01T00:00:${String(i).padStart(5, '0')}Z`,
    id: `id-${i}`,
  }));
  const calls: string[] = [];
  let version = 1;
  const state = (): ListingState => ({ version, total: rows.length });
  const source: PageSource = {
    async state() {
      calls.push('state');
      return state();
    },
    async sortKeys(_owner, stride, after, count) {
      calls.push(after === null ? 'sortKeys' : `sortKeys(${after.id})`);
      const first = after === null ? 0 : rows.findIndex((row) => row.id === after.id) + stride;
      const keys: SortKey[] = [];
      for (let i = first; i < rows.length && keys.length < count; i += stride) keys.push(rows[i]!);
      return { state: state(), keys };
    },
    async page(_owner, from, skip, limit) {
      calls.push(from === null ? `page(start+${skip})` : `page(${from.id}+${skip})`);
      const start = from === null ? 0 : rows.findIndex((row) => row.id === from.id);
      const slice = rows.slice(start + skip, start + skip + limit);
      return { state: state(), data: JSON.stringify(slice.map((row) => row.id)), returned: slice.length };
    },
  };
  return { source, calls, bump: () => (version += 1), rows };
}

const ids = (from: number, count: number) => Array.from({ length: count }, (_, i) => `id-${from + i}`);

/** A page read, with its document parsed. */
async function read(listing: PagedListing, page: { limit: number; offset: number }) {
  const { json, ...rest } = await listing.read('o', page);
  const { data, pagination } = JSON.parse(json.toString()) as { data: string[]; pagination: unknown };
  return { data, pagination, ...rest };
}

describe('PagedListing', () => {
  it('reads pages before the first stride from the start, with a skip', async () => {
    const { source, calls } = memorySource(1000);
    const listing = new PagedListing(source, { stride: 100 });
    expect(await read(listing, { limit: 5, offset: 42 })).toEqual({
      data: ids(42, 5),
      pagination: { limit: 5, offset: 42, total: 1000, nextOffset: 47 },
      returned: 5,
      total: 1000,
      version: 1,
    });
    expect(calls).toEqual(['state', 'page(start+42)']);
  });

  it('turns a deep offset into a seek to the remembered key plus a skip shorter than the stride', async () => {
    const { source, calls } = memorySource(1000);
    const listing = new PagedListing(source, { stride: 100 });
    expect(await read(listing, { limit: 3, offset: 777 })).toMatchObject({ data: ids(777, 3), returned: 3, total: 1000, version: 1 });
    expect(await read(listing, { limit: 3, offset: 950 })).toMatchObject({ data: ids(950, 3), returned: 3, total: 1000, version: 1 });
    expect(calls).toEqual(['state', 'sortKeys', 'page(id-700+77)', 'state', 'page(id-900+50)']);
  });

  it('caches a page on its second read and serves it from the cache while the version holds', async () => {
    const { source, calls, bump } = memorySource(300);
    const listing = new PagedListing(source, { stride: 100 });
    for (let i = 0; i < 3; i += 1) await listing.read('o', { limit: 10, offset: 0 });
    expect(calls).toEqual(['state', 'page(start+0)', 'state', 'page(start+0)', 'state']);
    bump();
    await listing.read('o', { limit: 10, offset: 0 });
    expect(calls.slice(5)).toEqual(['state', 'page(start+0)']);
  });

  it('does not cache pages read once, so a walk through every page leaves the cache to pages read again', async () => {
    const { source, calls } = memorySource(1000);
    const listing = new PagedListing(source, { stride: 100, pageCacheBytes: 2_000 });
    for (let i = 0; i < 2; i += 1) await listing.read('o', { limit: 10, offset: 0 });
    for (let offset = 10; offset < 1000; offset += 10) await listing.read('o', { limit: 10, offset });
    calls.length = 0;
    await listing.read('o', { limit: 10, offset: 0 });
    expect(calls).toEqual(['state']);
  });

  it('keeps a page read again and again as bytes, with the same content', async () => {
    const { source } = memorySource(300);
    const listing = new PagedListing(source, { stride: 100 });
    const reads = [];
    for (let i = 0; i < 12; i += 1) reads.push(await listing.read('o', { limit: 10, offset: 0 }));
    expect(typeof reads[0]!.json).toBe('string');
    expect(Buffer.isBuffer(reads[11]!.json)).toBe(true);
    expect(reads[11]!.json.toString()).toBe(reads[0]!.json);
    expect(reads[11]).toMatchObject({ returned: 10, total: 300, version: 1 });
  });

  it('reads sort keys in chunks, only as deep as the offsets read, and once for reads that need the same chunk', async () => {
    const { source, calls } = memorySource(20_000);
    const listing = new PagedListing(source, { stride: 10 });
    // 50 keys a chunk: offset 600 needs key 60, in the second chunk.
    expect(await read(listing, { limit: 2, offset: 600 })).toMatchObject({ data: ids(600, 2) });
    expect(calls.filter((call) => call.startsWith('sortKeys'))).toEqual(['sortKeys', 'sortKeys(id-490)']);
    calls.length = 0;
    const deep = await Promise.all([5_000, 5_003, 4_990, 700].map((offset) => read(listing, { limit: 1, offset })));
    expect(deep.map((page) => page.data)).toEqual([ids(5_000, 1), ids(5_003, 1), ids(4_990, 1), ids(700, 1)]);
    // Keys 100 to 500 take chunks 3 to 11, each read once, though three reads waited for them.
    expect(calls.filter((call) => call.startsWith('sortKeys'))).toHaveLength(9);
    calls.length = 0;
    expect(await read(listing, { limit: 3, offset: 19_998 })).toMatchObject({ data: ids(19_998, 2), returned: 2 });
    expect(calls.filter((call) => call.startsWith('sortKeys'))).toHaveLength(29);
  });

  it('lets the event loop run between chunks of sort keys', async () => {
    const { source, calls } = memorySource(5_000);
    const listing = new PagedListing(source, { stride: 10 });
    setImmediate(() => calls.push('event loop'));
    await listing.read('o', { limit: 1, offset: 4_000 });
    const chunks = calls.filter((call) => call.startsWith('sortKeys'));
    expect(chunks).toHaveLength(9);
    expect(calls.indexOf('event loop')).toBeGreaterThan(calls.indexOf(chunks[0]!));
    expect(calls.indexOf('event loop')).toBeLessThan(calls.indexOf(chunks[8]!));
  });

  it('starts over from the new state when a write lands between two chunks of sort keys, and reads the right page', async () => {
    const { source, calls, bump } = memorySource(2_000);
    const sortKeys = source.sortKeys.bind(source);
    let chunks = 0;
    // The second chunk is read after a write: its keys belong to a state the first chunk's do not.
    const written: PageSource = { ...source, sortKeys: async (...args) => ((chunks += 1) === 2 && bump(), sortKeys(...args)) };
    const listing = new PagedListing(written, { stride: 10 });
    expect(await read(listing, { limit: 2, offset: 1_500 })).toMatchObject({ data: ids(1_500, 2), returned: 2, version: 2 });
    // Chunk 1 at version 1, chunk 2 refused (version 2), then chunks 1 to 4 again at version 2.
    expect(calls.filter((call) => call.startsWith('sortKeys'))).toHaveLength(6);
    expect(calls.filter((call) => call === 'state')).toHaveLength(2);
  });

  it('rebuilds the remembered keys after a write', async () => {
    const { source, calls, bump } = memorySource(300);
    const listing = new PagedListing(source, { stride: 100 });
    await listing.read('o', { limit: 1, offset: 250 });
    bump();
    await listing.read('o', { limit: 1, offset: 250 });
    expect(calls.filter((call) => call === 'sortKeys')).toHaveLength(2);
  });

  it('answers an offset past the end from the state alone', async () => {
    const { source, calls } = memorySource(30);
    const listing = new PagedListing(source);
    expect(await read(listing, { limit: 50, offset: 30 })).toMatchObject({ data: [], returned: 0, total: 30, version: 1 });
    expect(calls).toEqual(['state']);
  });

  it('retries when a write lands between the state and the page, and falls back to one plain read under a storm', async () => {
    const { source, calls, bump } = memorySource(500);
    const page = source.page.bind(source);
    const stormy: PageSource = { ...source, page: async (...args) => (bump(), page(...args)) };
    const listing = new PagedListing(stormy, { stride: 100 });
    expect(await read(listing, { limit: 2, offset: 10 })).toMatchObject({ data: ids(10, 2), returned: 2, total: 500, version: 5 });
    expect(calls.filter((call) => call.startsWith('page'))).toEqual([
      'page(start+10)',
      'page(start+10)',
      'page(start+10)',
      'page(start+10)',
    ]);
  });

  describe('with a state TTL', () => {
    const clock = () => {
      let at = 0;
      return { now: () => at, advance: (ms: number) => (at += ms) };
    };

    it('asks the database for the state once per TTL, not once per read', async () => {
      const { source, calls } = memorySource(300);
      const time = clock();
      const listing = new PagedListing(source, { stride: 100, stateTtlMs: 250, now: time.now });
      for (let i = 0; i < 5; i += 1) await listing.read('o', { limit: 10, offset: 0 });
      expect(calls).toEqual(['state', 'page(start+0)', 'page(start+0)']);
      time.advance(250);
      await listing.read('o', { limit: 10, offset: 0 });
      expect(calls.slice(3)).toEqual(['state']);
    });

    it('shows a write once the TTL has passed', async () => {
      const { source, bump } = memorySource(300);
      const time = clock();
      const listing = new PagedListing(source, { stride: 100, stateTtlMs: 250, now: time.now });
      for (let i = 0; i < 2; i += 1) expect((await listing.read('o', { limit: 10, offset: 0 })).version).toBe(1);
      bump();
      time.advance(249);
      expect((await listing.read('o', { limit: 10, offset: 0 })).version).toBe(1);
      time.advance(1);
      expect((await listing.read('o', { limit: 10, offset: 0 })).version).toBe(2);
    });

    it('never pairs a page with a state it does not belong to: a page read past a cached state asks again', async () => {
      const { source, calls, bump } = memorySource(300);
      const time = clock();
      const listing = new PagedListing(source, { stride: 100, stateTtlMs: 250, now: time.now });
      await listing.read('o', { limit: 10, offset: 0 });
      bump();
      // Not cached: the page comes from the database at version 2, so the cached version-1 state is refreshed.
      expect(await read(listing, { limit: 10, offset: 20 })).toMatchObject({ data: ids(20, 10), returned: 10, total: 300, version: 2 });
      expect(calls.slice(2)).toEqual(['page(start+20)', 'state', 'page(start+20)']);
    });
  });
});
