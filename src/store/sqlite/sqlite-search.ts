import type Database from 'better-sqlite3';
import { lookupWords, type SearchCandidate, type SearchReads, type SearchScope, type WalkPosition } from '../search-plan.js';
import { SEARCH_MARKERS } from './migrations.js';

/** A contact as the SQLite search reads it; `row_id` finds its full row once it is chosen. */
export interface SqliteCandidate extends SearchCandidate {
  row_id: number;
  created_at: string;
}

// The searched text other than name and email, in one string (each tag on its own line): one value to hand over
// instead of six, and no JSON to decode.
const REST = 'concat_ws(char(10), c.company, c.title, c.school, c.location, (SELECT group_concat(value, char(10)) FROM json_each(c.tags)))';
const candidateColumns = (rest: string) => `c.rowid AS row_id, c.id, c.created_at, c.name, c.email, ${rest} AS rest`;
const LISTABLE = 'c.owner_id = @owner AND c.merged_into IS NULL AND c.is_self = 0';

const SIZE_SQL = 'SELECT total FROM owner_listing WHERE owner_id = ?';
const lookupSql = (rest: string) => `
  SELECT ${candidateColumns(rest)} FROM contact_words w JOIN contacts c ON c.rowid = w.rowid
  WHERE contact_words MATCH @match AND ${LISTABLE}
  ORDER BY c.created_at, c.id`;
const LOOKUP_WORDS_SQL = lookupSql(REST);
// Exact and prefix ranks depend on name and email alone.
const LOOKUP_LEADS_SQL = lookupSql('NULL');
const walkSql = (after: string) =>
  `SELECT ${candidateColumns(REST)} FROM contacts c WHERE ${LISTABLE} ${after} ORDER BY c.created_at, c.id LIMIT @count`;
const WALK_FROM_START_SQL = walkSql('');
const WALK_AFTER_SQL = walkSql('AND (c.created_at, c.id) > (@created_at, @id)');

/** An FTS5 string: taken as text, never as query syntax. */
const ftsString = (text: string) => `"${text.replaceAll('"', '""')}"`;

/**
 * The FTS5 query for a scope: always the owner's word (the index holds every owner), then the query's words as the
 * index holds them (see migration 4). Query words are letters, digits and marks only, so they never meet a marker.
 */
function matchExpression(scope: SearchScope, ownerId: string, words: readonly string[]): string {
  const owner = ftsString(SEARCH_MARKERS.owner + ownerId.replaceAll('-', ''));
  const lead = SEARCH_MARKERS.lead + words.join(' ');
  // Values starting with a symbol hold no lead marker on their first word: those contacts come along, to be ranked.
  const symbol = `{other} : ${ftsString(SEARCH_MARKERS.symbol)}`;
  switch (scope) {
    case 'exact':
      return `${owner} AND ({name email} : ${ftsString(`${lead} ${SEARCH_MARKERS.end}`)} OR ${symbol})`;
    case 'prefix':
      return `${owner} AND ({name email} : ${ftsString(lead)} * OR ${symbol})`;
    case 'words':
      // The first word of a name or an email is indexed with the lead marker glued on.
      return [owner, ...lookupWords(words).map((word) => `(${ftsString(word)} * OR ${ftsString(SEARCH_MARKERS.lead + word)} *)`)].join(' AND ');
  }
}

/** The search's reads of one owner's contacts; run them inside one read transaction. */
export function sqliteSearchReads(
  prepare: (sql: string) => Database.Statement,
  ownerId: string,
  words: readonly string[],
): SearchReads<SqliteCandidate> {
  return {
    size() {
      return (prepare(SIZE_SQL).pluck().get(ownerId) as number | undefined) ?? 0;
    },
    lookup(scope) {
      const sql = scope === 'words' ? LOOKUP_WORDS_SQL : LOOKUP_LEADS_SQL;
      return prepare(sql).all({ owner: ownerId, match: matchExpression(scope, ownerId, words) }) as SqliteCandidate[];
    },
    walk(after: WalkPosition | null, count: number) {
      const rows = (
        after === null
          ? prepare(WALK_FROM_START_SQL).all({ owner: ownerId, count })
          : prepare(WALK_AFTER_SQL).all({ owner: ownerId, count, created_at: after.created_at, id: after.id })
      ) as SqliteCandidate[];
      const last = rows.at(-1);
      return { rows, walked: rows.length, last: last ? { created_at: last.created_at, id: last.id } : null };
    },
  };
}
