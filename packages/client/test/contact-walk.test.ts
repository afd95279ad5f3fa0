import { describe, expect, it } from 'vitest';
import { walkContacts } from '../src/contact-walk.js';
import { UnexpectedResponseError } from '../src/errors.js';
import type { Contact, ContactListResponse } from '../src/types.js';
import { prng } from '../../../test/support/prng.js';

const BASE = Date.parse('2024-01-01T00:00:00.000Z');
let nextId = 0;

function contact(createdAt: number): Contact {
  const id = `00000000-0000-7000-8000-${(nextId++).toString(16).padStart(12, '0')}`;
  return { id, created_at: new Date(createdAt).toISOString() } as Contact;
}

/** The listing as the server keeps it: ordered by created_at, then id; a page is one contiguous slice. */
class SimulatedListing {
  rows: Contact[];
  requests = 0;

  constructor(count: number) {
    this.rows = Array.from({ length: count }, (_, i) => contact(BASE + i * 10));
  }

  page(offset: number, limit: number): ContactListResponse {
    this.requests += 1;
    const data = this.rows.slice(offset, offset + limit);
    const total = this.rows.length;
    const next = offset + data.length;
    return { data, pagination: { limit, offset, total, nextOffset: data.length > 0 && next < total ? next : null } };
  }

  merge(index: number): Contact {
    return this.rows.splice(index, 1)[0]!;
  }

  insert(createdAt: number): Contact {
    const added = contact(createdAt);
    this.rows.push(added);
    this.rows.sort((a, b) => a.created_at.localeCompare(b.created_at) || a.id.localeCompare(b.id));
    return added;
  }
}

async function collect(walk: AsyncIterable<Contact>): Promise<string[]> {
  const ids: string[] = [];
  for await (const item of walk) ids.push(item.id);
  return ids;
}

/** Each id of `ids` once: no duplicates, every one present. */
function expectExactlyOnce(yielded: string[], mustAppear: Iterable<string>): void {
  expect(new Set(yielded).size, 'no id is yielded twice').toBe(yielded.length);
  const seen = new Set(yielded);
  const missing = [...mustAppear].filter((id) => !seen.has(id));
  expect(missing, 'every contact that existed for the whole walk is yielded').toEqual([]);
}

describe('walkContacts', () => {
  it('without changes yields the listing in order, once, with a few overlapping rows per request', async () => {
    const listing = new SimulatedListing(250);
    const ids = await collect(walkContacts(async (offset, limit) => listing.page(offset, limit), { pageSize: 100 }));
    expect(ids).toEqual(listing.rows.map((row) => row.id));
    // 95 new rows per request after the first: 100 + 95 + 95 ≥ 250.
    expect(listing.requests).toBe(3);
  });

  it('an empty listing yields nothing after one request', async () => {
    const listing = new SimulatedListing(0);
    expect(await collect(walkContacts(async (o, l) => listing.page(o, l), { pageSize: 10 }))).toEqual([]);
    expect(listing.requests).toBe(1);
  });

  it('repairs the skip plain offset paging makes when rows before the offset are merged away', async () => {
    const mergeBehind = (listing: SimulatedListing, offset: number) => {
      // Twelve rows just before the offset disappear: more than the overlap, so the walk must step back.
      if (listing.requests === 1) for (let i = 0; i < 12; i++) listing.merge(offset - 20);
    };
    const plain = new SimulatedListing(100);
    const everyone = plain.rows.map((row) => row.id);
    const plainIds: string[] = [];
    for (let offset: number | null = 0; offset !== null;) {
      mergeBehind(plain, offset);
      const page = plain.page(offset, 30);
      plainIds.push(...page.data.map((row) => row.id));
      offset = page.pagination.nextOffset;
    }
    const survivors = everyone.filter((id) => plain.rows.some((row) => row.id === id));
    expect(
      survivors.filter((id) => !plainIds.includes(id)),
      'plain paging skips rows',
    ).toHaveLength(12);

    const listing = new SimulatedListing(100);
    const walked = await collect(
      walkContacts(
        async (offset, limit) => {
          mergeBehind(listing, offset);
          return listing.page(offset, limit);
        },
        { pageSize: 30 },
      ),
    );
    expectExactlyOnce(
      walked,
      listing.rows.map((row) => row.id),
    );
  });

  it('rows inserted before the offset repeat nothing', async () => {
    const listing = new SimulatedListing(100);
    const original = listing.rows.map((row) => row.id);
    const walked = await collect(
      walkContacts(
        async (offset, limit) => {
          if (listing.requests === 1) for (let i = 0; i < 40; i++) listing.insert(BASE - 1000 + i);
          return listing.page(offset, limit);
        },
        { pageSize: 30 },
      ),
    );
    expectExactlyOnce(walked, original);
    expect(walked).toEqual(original);
  });

  it('under random merges and inserts anywhere between requests, yields every lasting contact exactly once (200 seeds)', async () => {
    for (let seed = 1; seed <= 200; seed++) {
      const random = prng(seed);
      const listing = new SimulatedListing(Math.floor(random() * 300));
      const merged = new Set<string>();
      const original = listing.rows.map((row) => row.id);
      const pageSize = 2 + Math.floor(random() * 40);
      const walked = await collect(
        walkContacts(
          async (offset, limit) => {
            for (let change = Math.floor(random() * 25); change > 0 && listing.rows.length > 0; change--) {
              if (random() < 0.6) merged.add(listing.merge(Math.floor(random() * listing.rows.length)).id);
              else listing.insert(random() < 0.5 ? BASE + Math.floor(random() * 3000) : Date.now());
            }
            return listing.page(offset, limit);
          },
          { pageSize },
        ),
      );
      try {
        expectExactlyOnce(
          walked,
          original.filter((id) => !merged.has(id)),
        );
      } catch (error) {
        throw new Error(`seed ${seed}: ${(error as Error).message}`, { cause: error });
      }
    }
  });

  it('a page out of created_at, id order fails the walk rather than risk a gap', async () => {
    const listing = new SimulatedListing(5);
    listing.rows.reverse();
    await expect(collect(walkContacts(async (o, l) => listing.page(o, l), { pageSize: 10 }))).rejects.toBeInstanceOf(
      UnexpectedResponseError,
    );
  });

  it('refuses a page size the overlap cannot work with', async () => {
    const walk = (pageSize: number) => collect(walkContacts(async () => new SimulatedListing(0).page(0, 1), { pageSize }));
    await expect(walk(1)).rejects.toThrow(/pageSize must be an integer from 2 to 100/);
    await expect(walk(101)).rejects.toThrow(RangeError);
  });
});
