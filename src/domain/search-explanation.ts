import { searchMatcher, type SearchableContact, type SearchField, type SearchRank } from './search.js';

/** Why each hit of a search matched, and whether the query names several people equally well. */
export interface SearchExplanation {
  /** For each hit, in order: the fields of which some word starts with a word of the query. */
  matched: SearchField[][];
  /**
   * Two or more hits match by name, equally and better than any other does by name (`john` for John Smith and John
   * Doe): whoever asked meant one person, so the one to ask is the user, not the ranking.
   */
  ambiguous: boolean;
}

/** Explains the hits `query` found (as the search returned them, best first). */
export function explainSearch(query: string, hits: readonly SearchableContact[]): SearchExplanation {
  const matcher = searchMatcher(query);
  const nameRanks = hits.map((hit) => matcher.nameRank(hit.name)).filter((rank): rank is SearchRank => rank !== null);
  const best = Math.min(...nameRanks);
  return {
    matched: hits.map((hit) => matcher.matchedFields(hit)),
    ambiguous: nameRanks.filter((rank) => rank === best).length >= 2,
  };
}
