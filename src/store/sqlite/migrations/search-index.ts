/**
 * Private-use characters the search index (migration 4) adds to the text it indexes. FTS5's unicode61 tokenizer
 * counts them as letters while search words never hold one, so no query word can match them by accident.
 */
export const SEARCH_MARKERS = {
  /** Glued before the first word of `name` and of `email`: `\uE002ada` marks a name or email starting with "ada". */
  lead: '\uE002',
  /** A word of its own after the last word of `name` and of `email`, so a phrase can require it to be the whole value. */
  end: '\uE000',
  /** Glued before the owner id (without dashes): one word per owner, so a match can be narrowed to one owner. */
  owner: '\uE001',
  /**
   * A word of its own among the other text when the name or the email starts with a symbol (an emoji, an arrow, a
   * circled letter): FTS5 splits the lead marker off such a value, so lookups of leads take these contacts too.
   */
  symbol: '\uE003',
} as const;

const charOf = (marker: string) => `char(${marker.codePointAt(0)})`;
/**
 * Spaces and punctuation FTS5 would skip before a name's first word (ASCII, Latin-1, General Punctuation, CJK
 * brackets), trimmed so that the lead marker touches that word.
 */
const LEADING_PUNCTUATION = [
  [0x09, 0x0a],
  [0x0d, 0x0d],
  [0x20, 0x2f],
  [0x3a, 0x40],
  [0x5b, 0x60],
  [0x7b, 0x7e],
  [0xa0, 0xa9],
  [0xab, 0xb1],
  [0xb4, 0xb4],
  [0xb6, 0xb8],
  [0xbb, 0xbb],
  [0xbf, 0xbf],
  [0x2000, 0x206f],
  [0x3000, 0x3004],
  [0x3008, 0x3020],
].flatMap(([first, last]) => Array.from({ length: last! - first! + 1 }, (_, offset) => first! + offset));
/** Symbols a value may start with once trimmed: currency, arrows to dingbats, enclosed CJK, emoji. */
const LEADING_SYMBOLS = [
  [0x20a0, 0x20cf],
  [0x2190, 0x2bff],
  [0x3200, 0x33ff],
  [0x1f000, 0x1faff],
];

/**
 * How a migration writes the search index's SQL. Migration 4 wrote it for the SQLite the service bundles; from
 * migration 6 on it stays within SQLite 3.40 (docs/sqlite.md), so that Debian 12's sqlite3 and Python can open,
 * write and back up the database. Both write the same index.
 */
export interface SearchIndexSql {
  /** The characters `codes` as one text. */
  characters(codes: readonly number[]): string;
  /** `first` (never NULL) and each of `rest` that is not NULL, separated by spaces. */
  spaced(first: string, rest: readonly string[]): string;
  /** Takes the old row, whose indexed text is `text`, out of the index; `condition`, when given, must hold for it. */
  unindexOld(text: string, condition?: string): string;
}

export const SEARCH_INDEX_SQL_4: SearchIndexSql = {
  characters: (codes) => `char(${codes.join(', ')})`,
  spaced: (first, [symbol, ...others]) => `concat_ws(' ', ${first},\n    ${symbol},\n    ${others.join(', ')})`,
  unindexOld: (_text, condition) => `DELETE FROM contact_words WHERE rowid = old.rowid${condition ? ` AND ${condition}` : ''}`,
};

/** Arguments a function call may pass in SQLite before 3.48 (SQLITE_MAX_FUNCTION_ARG). */
const MAX_FUNCTION_ARGS = 127;
export const SEARCH_INDEX_SQL_6: SearchIndexSql = {
  characters: (codes) =>
    Array.from(
      { length: Math.ceil(codes.length / MAX_FUNCTION_ARGS) },
      (_, call) => `char(${codes.slice(call * MAX_FUNCTION_ARGS, (call + 1) * MAX_FUNCTION_ARGS).join(', ')})`,
    ).join(' || '),
  // concat_ws came with SQLite 3.44.
  spaced: (first, rest) => [first, ...rest.map((part) => `coalesce(' ' || ${part}, '')`)].join('\n    || '),
  // Without contentless_delete (SQLite 3.43) a contentless index forgets a row only when given the text it indexed.
  unindexOld: (text, condition) =>
    `INSERT INTO contact_words (contact_words, rowid, name, email, other) SELECT 'delete', old.rowid, ${text}${condition ? ` WHERE ${condition}` : ''}`,
};

// Most values start with an ASCII letter or digit: those skip the trim.
const trimmed = (value: string, sql: SearchIndexSql) =>
  `CASE WHEN ${value} GLOB '[0-9A-Za-z]*' THEN ${value} ELSE ltrim(${value}, ${sql.characters(LEADING_PUNCTUATION)}) END`;
const leadOf = (value: string, sql: SearchIndexSql) =>
  `${charOf(SEARCH_MARKERS.lead)} || ${trimmed(value, sql)} || ' ' || ${charOf(SEARCH_MARKERS.end)}`;
const startsWithSymbol = (value: string, sql: SearchIndexSql) =>
  `(${value} NOT GLOB '[0-9A-Za-z]*' AND (SELECT ${LEADING_SYMBOLS.map(([first, last]) => `code BETWEEN ${first} AND ${last}`).join(' OR ')}
    FROM (SELECT unicode(${trimmed(value, sql)}) AS code)))`;

/** The text the search index holds for the contact whose columns `row` names (`new.` in a trigger). */
function searchIndexText(row: string, sql: SearchIndexSql): string {
  const symbol = `CASE WHEN ${startsWithSymbol(`${row}name`, sql)} OR ${startsWithSymbol(`${row}email`, sql)} THEN ${charOf(SEARCH_MARKERS.symbol)} END`;
  return `${leadOf(`${row}name`, sql)}, ${leadOf(`${row}email`, sql)},
  ${sql.spaced(`${charOf(SEARCH_MARKERS.owner)} || replace(${row}owner_id, '-', '')`, [
    symbol,
    ...['company', 'title', 'school', 'location'].map((column) => `${row}${column}`),
    `(SELECT group_concat(value, ' ') FROM json_each(${row}tags))`,
  ])}`;
}

/** Indexes, in one statement, the listable contacts that `where` selects (as migrations 4 and 6 and a bulk load do). */
export const indexContactWordsSql = (where: string, sql = SEARCH_INDEX_SQL_6) => `INSERT INTO contact_words (rowid, name, email, other)
  SELECT rowid, ${searchIndexText('', sql)} FROM contacts WHERE merged_into IS NULL AND is_self = 0 AND ${where}`;

const LISTABLE_NEW = 'new.merged_into IS NULL AND new.is_self = 0';
const LISTABLE_OLD = 'old.merged_into IS NULL AND old.is_self = 0';

/** The triggers that keep the search index in step with contacts (migration 4; migrations 5 and 6 recreate them). */
export const contactWordsTriggers = (
  sql: SearchIndexSql,
) => `CREATE TRIGGER contact_words_insert AFTER INSERT ON contacts WHEN ${LISTABLE_NEW} BEGIN
        INSERT INTO contact_words (rowid, name, email, other) VALUES (new.rowid, ${searchIndexText('new.', sql)});
      END;
      CREATE TRIGGER contact_words_update
        AFTER UPDATE OF owner_id, is_self, merged_into, name, email, company, title, school, location, tags ON contacts BEGIN
        ${sql.unindexOld(searchIndexText('old.', sql), LISTABLE_OLD)};
        INSERT INTO contact_words (rowid, name, email, other) SELECT new.rowid, ${searchIndexText('new.', sql)} WHERE ${LISTABLE_NEW};
      END;
      CREATE TRIGGER contact_words_delete AFTER DELETE ON contacts WHEN ${LISTABLE_OLD} BEGIN
        ${sql.unindexOld(searchIndexText('old.', sql))};
      END;`;
