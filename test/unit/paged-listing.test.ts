import { describe, expect, it } from 'vitest';
import { PagedListing, type ListingState, type PageSource, type SortKey } from '../../src/store/paged-listing.js';

/** A listing of `n` rows in memory; `version` changes on demand, and every call is recorded. */
function memorySource(n: number) {
  const rows: SortKey[] = Array.from({ length: n }, (_, i) => ({ created_at: `2024-01-01T00:00:${String(i).padStart(5, '0')}Z`, id: `id-${i}` }));
  const calls: string[] = [];
  let version = 1;
  const state = (): ListingState => ({ version, total: rows.length });
  const source: PageSource = {
    async state() {
      calls.push('state');
      return state();
    },
    async sortKeys(_owner, stride) {
      calls.push('sortKeys');
      return { state: state(), keys: rows.filter((_, i) => i % stride === 0) };
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

const ids = (from: number, count: number) => JSON.stringify(Array.from({ length: count }, (_, i) => `id-${from + i}`));

describe('PagedListing', () => {
  it('reads pages before the first stride from the start, with a skip', async () => {
    const { source, calls } = memorySource(1000);
    const listing = new PagedListing(source, { stride: 100 });
    expect(await listing.read('o', { limit: 5, offset: 42 })).toEqual({ data: ids(42, 5), returned: 5, total: 1000 });
    expect(calls).toEqual(['state', 'page(start+42)']);
  });

  it('turns a deep offset into a seek to the remembered key plus a skip shorter than the stride', async () => {
    const { source, calls } = memorySource(1000);
    const listing = new PagedListing(source, { stride: 100 });
    expect(await listing.read('o', { limit: 3, offset: 777 })).toEqual({ data: ids(777, 3), returned: 3, total: 1000 });
    expect(await listing.read('o', { limit: 3, offset: 950 })).toEqual({ data: ids(950, 3), returned: 3, total: 1000 });
    expect(calls).toEqual(['state', 'sortKeys', 'page(id-700+77)', 'state', 'page(id-900+50)']);
  });

  it('serves a repeated page from its cache while the version holds, and reads again once it changes', async () => {
    const { source, calls, bump } = memorySource(300);
    const listing = new PagedListing(source, { stride: 100 });
    await listing.read('o', { limit: 10, offset: 0 });
    await listing.read('o', { limit: 10, offset: 0 });
    expect(calls).toEqual(['state', 'page(start+0)', 'state']);
    bump();
    await listing.read('o', { limit: 10, offset: 0 });
    expect(calls.slice(3)).toEqual(['state', 'page(start+0)']);
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
    expect(await listing.read('o', { limit: 50, offset: 30 })).toEqual({ data: '[]', returned: 0, total: 30 });
    expect(calls).toEqual(['state']);
  });

  it('retries when a write lands between the state and the page, and falls back to one plain read under a storm', async () => {
    const { source, calls, bump } = memorySource(500);
    const page = source.page.bind(source);
    const stormy: PageSource = { ...source, page: async (...args) => (bump(), page(...args)) };
    const listing = new PagedListing(stormy, { stride: 100 });
    expect(await listing.read('o', { limit: 2, offset: 10 })).toEqual({ data: ids(10, 2), returned: 2, total: 500 });
    expect(calls.filter((call) => call.startsWith('page'))).toEqual(['page(start+10)', 'page(start+10)', 'page(start+10)', 'page(start+10)']);
  });
});
