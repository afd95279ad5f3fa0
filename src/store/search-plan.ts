import { SearchRank, type SearchMatcher, type SearchText } from '../domain/search.js';

/**
 * What an index lookup narrows to, widest last: contacts that may rank `exact` (name or email words are the
 * query's), that may rank `prefix` or better (name or email words start with the query's), or that may match at all.
 */
export type SearchScope = 'exact' | 'prefix' | 'words';

/** A contact as a search reads it: what ranking needs, and its id. */
export interface SearchCandidate extends SearchText {
  id: string;
}

/** Where a walk stopped: the list-order key of the last contact it passed, as the store writes it. */
export interface WalkPosition {
  created_at: string;
  id: string;
}

/** A stretch of the owner's listable contacts in list order. */
export interface WalkStretch<C> {
  /** Those of the stretch that may match the query (a store may pass them all), in list order. */
  rows: C[];
  /** How many listable contacts the stretch covered, matching or not. */
  walked: number;
  /** The last contact covered; null when the stretch was empty. */
  last: WalkPosition | null;
}

/**
 * The reads a search needs from a store, each over one owner's listable contacts (never merged, never the self
 * contact). Lookups and walks may return more than matches (the domain's ranking decides), never fewer.
 */
export interface SearchReads<C> {
  /** How many listable contacts the owner has. */
  size(): number;
  /**
   * Every contact that may be in `scope`, in list order (`created_at`, then `id`), from the search index. For the
   * `exact` and `prefix` scopes `rest` may be left null: those ranks depend on name and email alone.
   */
  lookup(scope: SearchScope): C[];
  /** The next `count` contacts in list order after `after` (from the start when null). */
  walk(after: WalkPosition | null, count: number): WalkStretch<C>;
}

/** SearchReads of a store whose driver answers asynchronously. */
export type AsyncSearchReads<C> = {
  [K in keyof SearchReads<C>]: (...args: Parameters<SearchReads<C>[K]>) => Promise<ReturnType<SearchReads<C>[K]>>;
};

type Read = { kind: 'size' } | { kind: 'lookup'; scope: SearchScope } | { kind: 'walk'; after: WalkPosition | null; count: number };
type Plan<C, T> = Generator<Read, T, Answer<C>>;

/** The walk's first stretch, which estimates how dense the matches are, and the most it ever covers. */
const FIRST_STRETCH = 256;
const WALK_LIMIT = 8192;

/**
 * The query words an index lookup narrows by: those of 3 or more characters, or else the longest. A short prefix
 * (`o` of `o'kon`) matches a large part of any index and narrows little; ranking checks every word anyway.
 */
export function lookupWords(words: readonly string[]): string[] {
  const long = words.filter((word) => [...word].length >= 3);
  if (long.length > 0) return long;
  const longest = words.reduce((best, word) => ([...word].length > [...best].length ? word : best), '');
  return longest === '' ? [] : [longest];
}

/**
 * Answers a search with the best `limit` contacts: rank, then list order. No rank ever sorts all its matches.
 *
 * Exact matches come from the index (they are few). The prefix and word ranks each take the cheaper of two ways.
 * A walk of the list from the start, ranking as it goes, meets matches in list order and can stop at `limit`: it
 * costs about limit / density contacts, cheap for common matches (a first letter, `gmail`, a popular tag). An index
 * lookup returns every match already in list order: it costs about density × network size, cheap for rare ones.
 * The first stretch of the walk estimates the density; the walk goes on only while it promises to be cheaper.
 */
function* searchPlan<C extends SearchCandidate>(matcher: SearchMatcher, limit: number): Plan<C, C[]> {
  if (matcher.words.length === 0) return [];
  const ranks = new Map<C, SearchRank | null>();
  const rankOf = (contact: C): SearchRank | null => {
    let rank = ranks.get(contact);
    if (rank === undefined) {
      rank = matcher.rank(contact);
      ranks.set(contact, rank);
    }
    return rank;
  };
  let size: number | undefined;

  const walk = { rows: [] as C[], walked: 0, after: null as WalkPosition | null, ended: false };
  function* walkOn(count: number): Plan<C, void> {
    const stretch = (yield { kind: 'walk', after: walk.after, count }) as WalkStretch<C>;
    walk.walked += stretch.walked;
    walk.after = stretch.last;
    walk.ended = stretch.walked < count;
    walk.rows.push(...stretch.rows.filter((row) => rankOf(row) !== null));
  }

  const found: C[] = [];
  const chosen = new Set<string>();
  // A tier takes its rank and better ones not chosen yet: earlier tiers ended complete (else `found` would be
  // full), so a better one seen now is one an index lookup missed. It is kept, if not in its place.
  const inTier = (rank: SearchRank) => (row: C) => {
    const own = rankOf(row);
    return own !== null && own <= rank && !chosen.has(row.id);
  };

  /** The first `need` contacts of `rank` in list order, from the walk while it promises them cheaper, else the index. */
  function* tier(rank: SearchRank, scope: SearchScope, need: number): Plan<C, C[]> {
    for (;;) {
      const met = walk.rows.filter(inTier(rank));
      if (met.length >= need || walk.ended) return met.slice(0, need);
      if (walk.walked >= WALK_LIMIT) break;
      let count = FIRST_STRETCH;
      if (walk.walked > 0) {
        if (met.length === 0) break;
        size ??= (yield { kind: 'size' }) as number;
        const density = met.length / walk.walked;
        const toWalk = (need - met.length) / density;
        if (toWalk > density * size) break;
        // A little past the estimate, which the next stretch refines if it falls short.
        count = Math.ceil(toWalk * 1.25) + 16;
      }
      yield* walkOn(Math.min(count, WALK_LIMIT - walk.walked));
    }
    return firstOf((yield { kind: 'lookup', scope }) as C[], inTier(rank), need);
  }

  const choose = (rows: C[]) => {
    for (const row of rows) {
      found.push(row);
      chosen.add(row.id);
    }
  };
  const exact = (yield { kind: 'lookup', scope: 'exact' }) as C[];
  choose(firstOf(exact, (row) => rankOf(row) === SearchRank.exact, limit));
  if (found.length < limit) choose(yield* tier(SearchRank.prefix, 'prefix', limit - found.length));
  if (found.length < limit) choose(yield* tier(SearchRank.words, 'words', limit - found.length));
  return found;
}

/** The first `count` rows that `keep` accepts, asking no further: ranking a row is the costly part. */
function firstOf<C>(rows: readonly C[], keep: (row: C) => boolean, count: number): C[] {
  const kept: C[] = [];
  for (const row of rows) {
    if (kept.length === count) break;
    if (keep(row)) kept.push(row);
  }
  return kept;
}

type Answer<C> = number | C[] | WalkStretch<C>;

function answer<C>(reads: SearchReads<C>, read: Read): Answer<C>;
function answer<C>(reads: AsyncSearchReads<C>, read: Read): Promise<Answer<C>>;
function answer<C>(reads: SearchReads<C> | AsyncSearchReads<C>, read: Read): Answer<C> | Promise<Answer<C>> {
  switch (read.kind) {
    case 'size':
      return reads.size();
    case 'lookup':
      return reads.lookup(read.scope);
    case 'walk':
      return reads.walk(read.after, read.count);
  }
}

/** Runs the search plan on a store that reads synchronously (inside one transaction, so on one snapshot). */
export function searchSync<C extends SearchCandidate>(reads: SearchReads<C>, matcher: SearchMatcher, limit: number): C[] {
  const plan = searchPlan<C>(matcher, limit);
  let step = plan.next();
  while (!step.done) step = plan.next(answer(reads, step.value));
  return step.value;
}

/** Runs the search plan on a store that reads asynchronously (on one snapshot, e.g. a REPEATABLE READ transaction). */
export async function searchAsync<C extends SearchCandidate>(reads: AsyncSearchReads<C>, matcher: SearchMatcher, limit: number): Promise<C[]> {
  const plan = searchPlan<C>(matcher, limit);
  let step = plan.next();
  while (!step.done) step = plan.next(await answer(reads, step.value));
  return step.value;
}
