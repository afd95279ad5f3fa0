import type Database from 'better-sqlite3';
import { listableSql } from '../listable.js';
import { indexedLength, lookupWords, type SearchCandidate, type SearchReads, type SearchScope, type WalkPosition } from '../search-plan.js';
import { SEARCH_MARKERS } from './migrations/search-index.js';
import { SQLITE_DIALECT } from './dialect.js';

/** A contact as the SQLite search reads it; `row_id` finds its full row once it is chosen. */
export interface SqliteCandidate extends SearchCandidate {
  row_id: number;
  created_at: string;
}

// The searched text other than name and email, in one string (each tag on its own line): one value to hand over
// instead of six, and no JSON to decode.
const REST = 'concat_ws(char(10), c.company, c.title, c.school, c.location, (SELECT group_concat(value, char(10)) FROM json_each(c.tags)))';
const candidateColumns = (rest: string) => `c.rowid AS row_id, c.id, c.created_at, c.name, c.email, ${rest} AS rest`;
const LISTABLE = listableSql(SQLITE_DIALECT, '@owner', 'c');

const SIZE_SQL = 'SELECT total FROM owner_listing WHERE owner_id = ?';
const AFTER = 'AND (c.created_at, c.id) > (@created_at, @id)';
// The index yields rowids in order and the LIMIT stops it: a lookup reads at most @max contacts, sorted after.
// CROSS JOIN keeps the index first: a position to start after would otherwise have the planner walk the owner's
// contacts from it and ask the index about each.
const lookupSql = (rest: string, after: string) => `
  SELECT * FROM (
    SELECT ${candidateColumns(rest)} FROM contact_words w CROSS JOIN contacts c ON c.rowid = w.rowid
    WHERE contact_words MATCH @match AND ${LISTABLE} ${after} LIMIT @max
  ) ORDER BY created_at, id`;
const LOOKUP_SQL = {
  // Exact and prefix ranks depend on name and email alone.
  leads: { fromStart: lookupSql('NULL', ''), after: lookupSql('NULL', AFTER) },
  words: { fromStart: lookupSql(REST, ''), after: lookupSql(REST, AFTER) },
};
const walkSql = (after: string) =>
  `SELECT ${candidateColumns(REST)} FROM contacts c WHERE ${LISTABLE} ${after} ORDER BY c.created_at, c.id LIMIT @count`;
const WALK_SQL = { fromStart: walkSql(''), after: walkSql(AFTER) };

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
    case 'prefix': {
      // A one-letter last word would make FTS5 expand it to every indexed word it starts, for every owner. The
      // words before it narrow as well (they must be whole), and ranking checks the last.
      const wholeWords = words.length > 1 && indexedLength(words.at(-1)!) <= 1;
      const phrase = wholeWords ? ftsString(SEARCH_MARKERS.lead + words.slice(0, -1).join(' ')) : `${ftsString(lead)} *`;
      return `${owner} AND ({name email} : ${phrase} OR ${symbol})`;
    }
    case 'words':
      // The first word of a name or an email is indexed with the lead marker glued on.
      return [owner, ...lookupWords(words).map((word) => `(${ftsString(word)} * OR ${ftsString(SEARCH_MARKERS.lead + word)} *)`)].join(
        ' AND ',
      );
  }
}

/** The search's reads of one owner's contacts; run them inside one read transaction. */
export function sqliteSearchReads(
  prepare: (sql: string) => Database.Statement,
  ownerId: string,
  words: readonly string[],
): SearchReads<SqliteCandidate> {
  const readAfter = (sql: { fromStart: string; after: string }, after: WalkPosition | null, params: Record<string, unknown>) =>
    (after === null
      ? prepare(sql.fromStart).all(params)
      : prepare(sql.after).all({ ...params, created_at: after.created_at, id: after.id })) as SqliteCandidate[];
  return {
    size() {
      return (prepare(SIZE_SQL).pluck().get(ownerId) as number | undefined) ?? 0;
    },
    lookup(scope: SearchScope, after: WalkPosition | null, max: number) {
      const sql = LOOKUP_SQL[scope === 'words' ? 'words' : 'leads'];
      const rows = readAfter(sql, after, { owner: ownerId, match: matchExpression(scope, ownerId, words), max });
      return { rows, looked: rows.length };
    },
    walk(after: WalkPosition | null, count: number) {
      const rows = readAfter(WALK_SQL, after, { owner: ownerId, count });
      const last = rows.at(-1);
      return { rows, walked: rows.length, last: last ? { created_at: last.created_at, id: last.id } : null };
    },
  };
}
