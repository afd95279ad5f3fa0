import { searchMatcher, SearchRank, type SearchMatcher, type SearchText } from '../domain/search.js';

/**
 * The most contacts one search reads, walked and looked up together: what bounds its cost whatever the query (about
 * 10 ms for a search that reads them all on the benchmark's machine, as much as the costliest ordinary ones). When a
 * search reaches it, it answers with the best it has read. See docs/search.md.
 */
export const SEARCH_CANDIDATE_BUDGET = 2_000;
/** The most a search reads when its walk has met no match at all by the time it comes to the word rank. */
export const RARE_QUERY_BUDGET = SEARCH_CANDIDATE_BUDGET / 2;

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

/** What a lookup read. */
export interface LookupAnswer<C> {
  /** Those it read that may match the query (a store may pass them all), in list order. */
  rows: C[];
  /** How many contacts it read. */
  looked: number;
}

/**
 * The reads a search needs from a store, each over one owner's listable contacts (never merged, never the self
 * contact). Lookups and walks may return more than matches (the domain's ranking decides), never fewer, but for what
 * a lookup leaves unread past its `max`.
 */
export interface SearchReads<C> {
  /** How many listable contacts the owner has. */
  size(): number;
  /**
   * Reads the contacts that may be in `scope` after `after` in list order (from the start when null) from the search
   * index: all of them, or `max` when there are more, the first ones the index yields, so that the database never
   * reads past `max`. The `words` scope narrows by lookupWords (never asked when there are none). Rows come in list
   * order (`created_at`, then `id`); for the `exact` and `prefix` scopes their `rest` may be left null: those ranks
   * depend on name and email alone.
   */
  lookup(scope: SearchScope, after: WalkPosition | null, max: number): LookupAnswer<C>;
  /**
   * The next `count` contacts in list order after `after` (from the start when null): at least those that may match
   * and those a `words` lookup would return (a store may pass them all), so that the plan can estimate its cost.
   */
  walk(after: WalkPosition | null, count: number): WalkStretch<C>;
}

/** SearchReads of a store whose driver answers asynchronously. */
export type AsyncSearchReads<C> = {
  [K in keyof SearchReads<C>]: (...args: Parameters<SearchReads<C>[K]>) => Promise<ReturnType<SearchReads<C>[K]>>;
};

type Read =
  | { kind: 'size' }
  | { kind: 'lookup'; scope: SearchScope; after: WalkPosition | null; max: number }
  | { kind: 'walk'; after: WalkPosition | null; count: number };
type SearchSteps<C, T> = Generator<Read, T, Answer<C>>;

/** The walk's first stretch, which estimates how dense the matches are. */
const FIRST_STRETCH = 256;

/**
 * The query words a lookup of the `words` scope narrows by: those of 3 or more characters, or else the longest if it
 * has 2. A short prefix (`o` of `o'kon`) matches a large part of any index and narrows little; ranking checks every
 * word anyway. A one-letter word never narrows: the index expands it to every indexed word starting with it, on
 * SQLite those of every owner, before any LIMIT applies (23 ms for `a` among the benchmark's 300,000 contacts).
 * Lengths are counted as the index sees the word (indexedLength).
 */
export function lookupWords(words: readonly string[]): string[] {
  const distinct = [...new Set(words)];
  const long = distinct.filter((word) => indexedLength(word) >= 3);
  if (long.length > 0) return long;
  const longest = distinct.reduce((best, word) => (indexedLength(word) > indexedLength(best) ? word : best), '');
  return indexedLength(longest) >= 2 ? [longest] : [];
}

const MARKS = /\p{M}+/u;

/**
 * A query word's length as the SQLite index sees it: the shortest of the runs between its combining marks. FTS5's
 * unicode61 tokenizer drops the marks it knows as diacritics and splits words at the others, so `\u0301a` is
 * the one-letter word `a` to it, and `क\u093fa` is `क` then `a`. Search folding has already removed the marks that
 * follow Latin letters (searchWords); the marks left lead a word, or follow a letter of another script. Counting
 * the NFC form keeps a precomposed letter (é, й, a Hangul syllable) one letter, as FTS5 keeps it one character.
 */
export function indexedLength(word: string): number {
  const runs = word
    .normalize('NFC')
    .split(MARKS)
    .filter((run) => run !== '');
  return runs.length === 0 ? 0 : Math.min(...runs.map((run) => [...run].length));
}

/**
 * Answers a search with the best `limit` contacts: rank, then list order. No rank ever sorts all its matches, and no
 * search reads more than SEARCH_CANDIDATE_BUDGET contacts: past it, the best of those read.
 *
 * Exact matches come from the index (they are few). The prefix and word ranks each take the cheaper of two ways.
 * A walk of the list from the start, ranking as it goes, meets matches in list order and can stop at `limit`: it
 * costs about limit / density contacts, cheap for common matches (a first letter, `gmail`, a popular tag). An index
 * lookup returns the matches after the walk's last contact: it costs about density × network size, cheap for rare
 * ones. The first stretch of the walk estimates both; the walk goes on while it promises to be cheaper and to fit
 * in the budget, or while the lookup would cost over twice what is left. A `words` lookup may narrow by fewer words
 * than the query has (lookupWords), so its cost is estimated from the contacts the walk met that have those words.
 */
function* searchPlan<C extends SearchCandidate>(matcher: SearchMatcher, limit: number): SearchSteps<C, C[]> {
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
  let read = 0;
  const left = () => Math.max(0, SEARCH_CANDIDATE_BUDGET - read);

  const narrowing = lookupWords(matcher.words);
  // Null when a `words` lookup would return exactly the matches, or cannot be made.
  const narrowed = narrowing.length === 0 || narrowing.length === new Set(matcher.words).size ? null : searchMatcher(narrowing.join(' '));

  const walk = { rows: [] as C[], walked: 0, after: null as WalkPosition | null, ended: false, passed: [] as C[], wordCandidates: 0 };
  function* walkOn(count: number): SearchSteps<C, void> {
    const stretch = (yield { kind: 'walk', after: walk.after, count }) as WalkStretch<C>;
    read += stretch.walked;
    walk.walked += stretch.walked;
    walk.after = stretch.last;
    walk.ended = stretch.walked < count;
    walk.rows.push(...stretch.rows.filter((row) => rankOf(row) !== null));
    if (narrowed !== null) walk.passed.push(...stretch.rows);
  }
  /** How many of the contacts walked a `words` lookup would return; counted only when asked, as it costs a ranking. */
  const wordCandidates = () => {
    if (narrowed === null) return walk.rows.length;
    walk.wordCandidates += walk.passed.filter((row) => narrowed.rank(row) !== null).length;
    walk.passed = [];
    return walk.wordCandidates;
  };
  function* lookUp(scope: SearchScope, max = left()): SearchSteps<C, C[]> {
    const answer = (yield { kind: 'lookup', scope, after: walk.after, max }) as LookupAnswer<C>;
    read += answer.looked;
    return answer.rows;
  }

  const found: C[] = [];
  const chosen = new Set<string>();
  // A tier takes its rank and better ones not chosen yet: earlier tiers ended complete or out of budget (else
  // `found` would be full), so a better one seen now is one a lookup missed or had no budget for. It is kept, if not
  // in its place.
  const inTier = (rank: SearchRank) => (row: C) => {
    const own = rankOf(row);
    return own !== null && own <= rank && !chosen.has(row.id);
  };

  /** About how many contacts a lookup of `scope` after the walk would return; Infinity when none can be made. */
  function* lookupCost(scope: SearchScope, met: number): SearchSteps<C, number> {
    if (scope === 'words' && narrowing.length === 0) return Infinity;
    const density = (scope === 'words' ? wordCandidates() : met) / walk.walked;
    if (density === 0) return 0;
    size ??= (yield { kind: 'size' }) as number;
    return density * Math.max(0, size - walk.walked);
  }

  /**
   * The first `need` contacts of `rank` in list order: those the walk met, then, when it stops short, those a lookup
   * finds after it. Fewer when the budget runs out first.
   */
  function* tier(rank: SearchRank, scope: SearchScope, need: number): SearchSteps<C, C[]> {
    let met: C[];
    // While the walk has met no match at all, the word rank reads at most half the budget: the query is rare, so a
    // lookup finds its matches if one of its words is rare too, and reading on is unlikely to find any otherwise.
    const spare = () => (scope !== 'words' || walk.rows.length > 0 ? left() : Math.max(0, Math.min(left(), RARE_QUERY_BUDGET - read)));
    for (;;) {
      met = walk.rows.filter(inTier(rank));
      if (met.length >= need || walk.ended || spare() === 0) return met.slice(0, need);
      let count = FIRST_STRETCH;
      if (walk.walked > 0) {
        const toLookUp = yield* lookupCost(scope, met.length);
        const toWalk = met.length === 0 ? Infinity : ((need - met.length) * walk.walked) / met.length;
        // A little past the estimate, which the next stretch refines if it falls short.
        count = Math.ceil(toWalk * 1.25) + 16;
        // When neither fits in the budget, a lookup still finds more matches for what it reads, as the index picks
        // them: if they are matches, that is if the walk met some or the lookup narrows by every word of the query.
        // Up to twice the budget, so that the index's own work stays near the budget too.
        const picksMatches = met.length > 0 || scope !== 'words' || narrowed === null;
        const affordable = toLookUp <= spare() || (picksMatches && toLookUp <= 2 * spare());
        if (affordable && (toWalk > toLookUp || count > spare())) break;
      }
      yield* walkOn(Math.min(count, spare()));
    }
    return [...met, ...firstOf(yield* lookUp(scope, spare()), inTier(rank), need - met.length)];
  }

  const choose = (rows: C[]) => {
    for (const row of rows) {
      found.push(row);
      chosen.add(row.id);
    }
  };
  choose(firstOf(yield* lookUp('exact'), (row) => rankOf(row) === SearchRank.exact, limit));
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

type Answer<C> = number | LookupAnswer<C> | WalkStretch<C>;

function answer<C>(reads: SearchReads<C>, read: Read): Answer<C>;
function answer<C>(reads: AsyncSearchReads<C>, read: Read): Promise<Answer<C>>;
function answer<C>(reads: SearchReads<C> | AsyncSearchReads<C>, read: Read): Answer<C> | Promise<Answer<C>> {
  switch (read.kind) {
    case 'size':
      return reads.size();
    case 'lookup':
      return reads.lookup(read.scope, read.after, read.max);
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
export async function searchAsync<C extends SearchCandidate>(
  reads: AsyncSearchReads<C>,
  matcher: SearchMatcher,
  limit: number,
): Promise<C[]> {
  const plan = searchPlan<C>(matcher, limit);
  let step = plan.next();
  while (!step.done) step = plan.next(await answer(reads, step.value));
  return step.value;
}
