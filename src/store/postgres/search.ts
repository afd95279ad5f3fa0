import type pg from 'pg';
import { listableSql } from '../listable.js';
import { lookupWords, type AsyncSearchReads, type SearchCandidate, type SearchScope, type WalkPosition } from '../search-plan.js';
import { POSTGRES_DIALECT } from './dialect.js';
import { utcTimestampText } from './timestamps.js';

/** A contact as the PostgreSQL search reads it. */
export type PostgresCandidate = SearchCandidate;

// The searched text other than name and email in one string (each tag on its own line), as ranking reads it.
const REST = `concat_ws(E'\\n', company, title, school, location, array_to_string(tags, E'\\n'))`;
const LISTABLE = listableSql(POSTGRES_DIALECT, '$1::uuid');

const SIZE_SQL = 'SELECT total FROM owner_listing WHERE owner_id = $1::uuid';

/**
 * $2 the scope, $3 the query, after ($4, $5) in list order when $4 is not null, at most $6 contacts; the tsquery is
 * computed once per statement (an InitPlan), never per row. Every lexeme carries the owner's key, so the GIN index
 * alone narrows to the owner: owner_id is checked on the few rows found (MATERIALIZED keeps the planner from
 * intersecting with all of the owner's entries in another index). The LIMIT stops the heap scan (the index scan still
 * marks every match), so the rows read stay within $6 however many match; they are sorted after.
 */
const LOOKUP_WHERE = `merged_into IS NULL AND NOT is_self AND search_lexemes @@ (SELECT contacts_search_query($1::uuid, $2::text, $3::text))
      AND ($4::timestamptz IS NULL OR (created_at, id) > ($4::timestamptz, $5::uuid))`;
const lookupSql = (rest: string) => `
  WITH found AS MATERIALIZED (
    SELECT id, owner_id, created_at, name, email, ${rest} AS rest FROM contacts WHERE ${LOOKUP_WHERE} LIMIT $6::int
  )
  SELECT id, name, email, rest FROM found WHERE owner_id = $1::uuid ORDER BY created_at, id`;
const LOOKUP_WORDS_SQL = lookupSql(REST);
// Exact and prefix ranks depend on name and email alone.
const LOOKUP_LEADS_SQL = lookupSql('NULL');
/**
 * A `words` lookup narrowed by fewer words than the query has ($7) mostly reads contacts that cannot match: it sends
 * only those whose lexemes have them all, each with how many it read (a row of nulls carries it when none is sent).
 * 4.5 instead of 6.9 ms for 1,744 read of `ab cd ef` on the benchmark's network; where most rows match, the check
 * costs more than it saves.
 */
const LOOKUP_FEW_WORDS_SQL = `
  WITH found AS MATERIALIZED (
    SELECT id, owner_id, created_at, name, email, company, title, school, location, tags,
      search_lexemes @@ (SELECT contacts_search_query($1::uuid, 'words', $7::text)) AS hit
    FROM contacts WHERE ${LOOKUP_WHERE} LIMIT $6::int
  )
  SELECT counted.looked, found.id, found.name, found.email, ${REST} AS rest
  FROM (SELECT count(*) AS looked FROM found) counted LEFT JOIN found ON found.owner_id = $1::uuid AND found.hit
  ORDER BY found.created_at, found.id`;

/**
 * The next $5 contacts in list order after ($3, $4), or from the start when $3 is null: those whose lexemes match $2
 * (the words a lookup of the `words` scope narrows by, else all of the query's), and the last one in any case
 * (position = walked, to continue from). The text of created_at keeps its microseconds, so the walk continues
 * exactly where it stopped. Matching is decided as the stretch is read, so the lexemes are never copied: 4.7 instead
 * of 6.6 ms for a stretch of 2,000 on the benchmark's network.
 */
const WALK_SQL = `
  WITH walked AS MATERIALIZED (
    SELECT row_number() OVER () AS position, stretch.* FROM (
      SELECT id, created_at, name, email, company, title, school, location, tags,
        search_lexemes @@ (SELECT contacts_search_query($1::uuid, 'words', $2::text)) AS hit
      FROM contacts
      WHERE ${LISTABLE} AND ($3::timestamptz IS NULL OR (created_at, id) > ($3::timestamptz, $4::uuid))
      ORDER BY created_at, id LIMIT $5::int
    ) stretch
  ), last AS (SELECT max(position) AS walked FROM walked)
  SELECT id, name, email, ${REST} AS rest, ${utcTimestampText('created_at')} AS position_at, position, last.walked, hit
  FROM walked, last
  WHERE hit OR position = last.walked
  ORDER BY position`;

type LookupRow = { [K in keyof PostgresCandidate]: PostgresCandidate[K] | null } & { looked: string };
type WalkRow = PostgresCandidate & { position_at: string; position: string; walked: string; hit: boolean };

/** The search's reads of one owner's contacts, on one client inside one REPEATABLE READ transaction. */
export function postgresSearchReads(client: pg.PoolClient, ownerId: string, words: readonly string[]): AsyncSearchReads<PostgresCandidate> {
  const query = words.join(' ');
  const narrowing = lookupWords(words);
  const walkFilter = (narrowing.length > 0 ? narrowing : words).join(' ');
  const narrowsByFewer = narrowing.length < new Set(words).size;
  return {
    async size() {
      const { rows } = await client.query<{ total: number }>({ name: 'contacts_search_size', text: SIZE_SQL, values: [ownerId] });
      return rows[0]?.total ?? 0;
    },
    async lookup(scope: SearchScope, after: WalkPosition | null, max: number) {
      const range = [after?.created_at ?? null, after?.id ?? null, max];
      if (scope === 'words' && narrowsByFewer) {
        const { rows } = await client.query<LookupRow>({
          name: 'contacts_search_lookup_few_words',
          text: LOOKUP_FEW_WORDS_SQL,
          values: [ownerId, scope, narrowing.join(' '), ...range, query],
        });
        return {
          rows: rows.flatMap(({ looked: _looked, ...contact }) => (contact.id === null ? [] : [contact as PostgresCandidate])),
          looked: Number(rows[0]?.looked ?? 0),
        };
      }
      const { rows } = await client.query<PostgresCandidate>(
        scope === 'words'
          ? { name: 'contacts_search_lookup_words', text: LOOKUP_WORDS_SQL, values: [ownerId, scope, narrowing.join(' '), ...range] }
          : { name: 'contacts_search_lookup_leads', text: LOOKUP_LEADS_SQL, values: [ownerId, scope, query, ...range] },
      );
      return { rows, looked: rows.length };
    },
    async walk(after: WalkPosition | null, count: number) {
      const { rows } = await client.query<WalkRow>({
        name: 'contacts_search_walk',
        text: WALK_SQL,
        values: [ownerId, walkFilter, after?.created_at ?? null, after?.id ?? null, count],
      });
      const last = rows.at(-1);
      return {
        rows: rows
          .filter((row) => row.hit)
          .map(({ position_at: _at, position: _position, walked: _walked, hit: _hit, ...contact }) => contact),
        walked: last ? Number(last.walked) : 0,
        last: last ? { created_at: last.position_at, id: last.id } : null,
      };
    },
  };
}
