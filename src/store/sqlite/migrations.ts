import { CONTACT_COLUMNS_V1, CONTACT_FIELDS_V1 } from '../contact-fields-v1.js';
import { contactJsonExpression, namesAndValues } from '../contact-row.js';
import type { Migration } from '../contracts/migration.js';

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
interface SearchIndexSql {
  /** The characters `codes` as one text. */
  characters(codes: readonly number[]): string;
  /** `first` (never NULL) and each of `rest` that is not NULL, separated by spaces. */
  spaced(first: string, rest: readonly string[]): string;
  /** Takes the old row, whose indexed text is `text`, out of the index; `condition`, when given, must hold for it. */
  unindexOld(text: string, condition?: string): string;
}

const SEARCH_INDEX_SQL_4: SearchIndexSql = {
  characters: (codes) => `char(${codes.join(', ')})`,
  spaced: (first, [symbol, ...others]) => `concat_ws(' ', ${first},\n    ${symbol},\n    ${others.join(', ')})`,
  unindexOld: (_text, condition) => `DELETE FROM contact_words WHERE rowid = old.rowid${condition ? ` AND ${condition}` : ''}`,
};

/** Arguments a function call may pass in SQLite before 3.48 (SQLITE_MAX_FUNCTION_ARG). */
const MAX_FUNCTION_ARGS = 127;
const SEARCH_INDEX_SQL_6: SearchIndexSql = {
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

/**
 * The contacts table as migration 1 created it, under `name`, with `generated` column definitions after the
 * others (migration 5). Frozen like the migrations that use it: a change to it is a new migration.
 */
const contactsTableSql = (name: string, generated = '') => `CREATE TABLE ${name} (
        id             TEXT PRIMARY KEY,
        owner_id       TEXT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
        is_self        INTEGER NOT NULL DEFAULT 0 CHECK (is_self IN (0, 1)),
        merged_into    TEXT,
        name           TEXT,
        email          TEXT,
        phone          TEXT,
        company        TEXT,
        title          TEXT,
        school         TEXT,
        linkedin_url   TEXT,
        location       TEXT,
        description    TEXT,
        tags           TEXT CHECK (tags IS NULL OR json_type(tags) = 'array'),
        enrichment     TEXT CHECK (enrichment IS NULL OR json_type(enrichment) = 'object'),
        enriched_at    TEXT,
        source         TEXT,
        birthday       TEXT,
        research_data  TEXT CHECK (research_data IS NULL OR json_type(research_data) = 'object'),
        researched_at  TEXT,
        created_at     TEXT NOT NULL,
        updated_at     TEXT NOT NULL,${generated}
        UNIQUE (owner_id, id),
        -- A contact can only be merged into a contact of the same owner.
        FOREIGN KEY (owner_id, merged_into) REFERENCES ${name} (owner_id, id),
        CHECK (merged_into IS NULL OR merged_into <> id)
      );`;

/** The contacts table's indexes (migration 1; migration 5 recreates them on the rebuilt table). */
const CONTACTS_INDEXES = `CREATE INDEX contacts_listable ON contacts (owner_id, created_at, id) WHERE merged_into IS NULL AND is_self = 0;
      CREATE UNIQUE INDEX contacts_one_self_row ON contacts (owner_id) WHERE is_self = 1;
      CREATE INDEX contacts_merged_into ON contacts (owner_id, merged_into) WHERE merged_into IS NOT NULL;`;

const LISTABLE_NEW = 'new.merged_into IS NULL AND new.is_self = 0';
const LISTABLE_OLD = 'old.merged_into IS NULL AND old.is_self = 0';

/** The triggers that keep owner_listing in step with contacts (migration 3; migration 5 recreates them). */
const OWNER_LISTING_CONTACT_TRIGGERS = `CREATE TRIGGER owner_listing_insert AFTER INSERT ON contacts BEGIN
        UPDATE owner_listing SET version = version + 1, total = total + (new.merged_into IS NULL AND new.is_self = 0)
        WHERE owner_id = new.owner_id;
      END;
      CREATE TRIGGER owner_listing_update AFTER UPDATE ON contacts BEGIN
        UPDATE owner_listing SET version = version + 1, total = total - (old.merged_into IS NULL AND old.is_self = 0)
        WHERE owner_id = old.owner_id;
        UPDATE owner_listing SET version = version + 1, total = total + (new.merged_into IS NULL AND new.is_self = 0)
        WHERE owner_id = new.owner_id;
      END;
      CREATE TRIGGER owner_listing_delete AFTER DELETE ON contacts BEGIN
        UPDATE owner_listing SET version = version + 1, total = total - (old.merged_into IS NULL AND old.is_self = 0)
        WHERE owner_id = old.owner_id;
      END;`;

/** The triggers that keep the search index in step with contacts (migration 4; migrations 5 and 6 recreate them). */
const contactWordsTriggers = (
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

/** A contact's JSON as the API shows it, from its columns (migration 5): tags and objects are kept as JSON text. */
const CONTACT_API_JSON = contactJsonExpression(
  CONTACT_FIELDS_V1,
  (pairs) => `json_object(${namesAndValues(pairs)})`,
  ({ name, kind }) => (kind === 'tags' || kind === 'object' ? `json(${name})` : name),
);
/** The contacts table's stored columns (migration 1). */
const CONTACTS_STORED_COLUMNS = ['owner_id', 'is_self', 'merged_into', ...CONTACT_COLUMNS_V1].join(', ');

/**
 * A row-level trigger that records the contact's change for the owner of each side, at the owner's next change_seq
 * (migration 7). An update records for the old owner too when the row moved to another.
 */
function recordChangeTrigger(name: string, event: string, when: string, sides: readonly ('old' | 'new')[]): string {
  const record = (
    side: 'old' | 'new',
    moved: string,
  ) => `UPDATE owner_listing SET change_seq = change_seq + 1 WHERE owner_id = ${side}.owner_id${moved};
        INSERT OR REPLACE INTO contact_changes (owner_id, contact_id, seq, changed_at)
          SELECT owner_id, ${side}.id, change_seq, strftime('%Y-%m-%dT%H:%M:%fZ', 'now') FROM owner_listing
          WHERE owner_id = ${side}.owner_id${moved};`;
  const moved = sides.length === 2 ? ' AND old.owner_id <> new.owner_id' : '';
  const body = sides.map((side) => record(side, side === 'old' ? moved : '')).join('\n        ');
  return `CREATE TRIGGER ${name} ${event} ON contacts WHEN ${when} BEGIN
        ${body}
      END;`;
}

export const SQLITE_MIGRATIONS: readonly Migration[] = [
  {
    version: 1,
    name: 'users, contacts and api keys',
    sql: `
      CREATE TABLE users (
        id          TEXT PRIMARY KEY,
        email       TEXT NOT NULL,
        name        TEXT,
        plan        TEXT NOT NULL CHECK (plan IN ('free', 'pro')),
        created_at  TEXT NOT NULL,
        updated_at  TEXT NOT NULL
      );
      CREATE UNIQUE INDEX users_email_unique ON users (lower(email));

      ${contactsTableSql('contacts')}
      ${CONTACTS_INDEXES}

      CREATE TABLE api_keys (
        id            TEXT PRIMARY KEY,
        owner_id      TEXT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
        label         TEXT,
        scopes        TEXT NOT NULL CHECK (json_type(scopes) = 'array'),
        secret_hash   TEXT NOT NULL UNIQUE,
        created_at    TEXT NOT NULL,
        expires_at    TEXT,
        last_used_at  TEXT,
        revoked_at    TEXT
      );
      CREATE INDEX api_keys_owner ON api_keys (owner_id, created_at);
    `,
  },
  {
    version: 2,
    name: 'contact search index',
    // A trigram index finds any substring of 3+ characters, case-insensitively. External content: the text stays in
    // contacts only, and the triggers keep the index in step. Its rowids are contacts' implicit rowids, which SQLite's
    // VACUUM keeps (transfer optimization); should the index ever drift, INSERT … VALUES ('rebuild') restores it.
    // Merged and self rows are indexed too and filtered at query time, so a merge needs no index write.
    sql: `
      CREATE VIRTUAL TABLE contacts_search USING fts5(
        name, email, company, title, school, location, tags,
        content = 'contacts', content_rowid = 'rowid', tokenize = 'trigram case_sensitive 0'
      );
      INSERT INTO contacts_search (contacts_search) VALUES ('rebuild');

      CREATE TRIGGER contacts_search_insert AFTER INSERT ON contacts BEGIN
        INSERT INTO contacts_search (rowid, name, email, company, title, school, location, tags)
        VALUES (new.rowid, new.name, new.email, new.company, new.title, new.school, new.location, new.tags);
      END;
      CREATE TRIGGER contacts_search_delete AFTER DELETE ON contacts BEGIN
        INSERT INTO contacts_search (contacts_search, rowid, name, email, company, title, school, location, tags)
        VALUES ('delete', old.rowid, old.name, old.email, old.company, old.title, old.school, old.location, old.tags);
      END;
      CREATE TRIGGER contacts_search_update AFTER UPDATE OF name, email, company, title, school, location, tags ON contacts BEGIN
        INSERT INTO contacts_search (contacts_search, rowid, name, email, company, title, school, location, tags)
        VALUES ('delete', old.rowid, old.name, old.email, old.company, old.title, old.school, old.location, old.tags);
        INSERT INTO contacts_search (rowid, name, email, company, title, school, location, tags)
        VALUES (new.rowid, new.name, new.email, new.company, new.title, new.school, new.location, new.tags);
      END;
    `,
  },
  {
    version: 3,
    name: 'listing state per owner',
    // The database keeps each owner's listable count and a version that every write to the owner's contacts
    // bumps, so a page costs no COUNT(*) and caches keyed by version stay coherent with any writer, including
    // direct SQL by another process.
    sql: `
      CREATE TABLE owner_listing (
        owner_id  TEXT PRIMARY KEY REFERENCES users (id) ON DELETE CASCADE,
        total     INTEGER NOT NULL DEFAULT 0,
        version   INTEGER NOT NULL DEFAULT 0
      ) WITHOUT ROWID;
      INSERT INTO owner_listing (owner_id, total, version)
        SELECT u.id, (SELECT count(*) FROM contacts c WHERE c.owner_id = u.id AND c.merged_into IS NULL AND c.is_self = 0), 1
        FROM users u;

      CREATE TRIGGER owner_listing_user AFTER INSERT ON users BEGIN
        INSERT INTO owner_listing (owner_id) VALUES (new.id);
      END;
      ${OWNER_LISTING_CONTACT_TRIGGERS}
    `,
  },
  {
    version: 4,
    name: 'contact search by word prefix',
    // Replaces migration 2's trigram index, whose writes tripled import time and whose 1-2 character queries
    // scanned the owner's contacts. Contacts are indexed by word (unicode61: case and Latin accents folded, anything
    // but a letter or digit separates words) under three columns: name and email with the markers above, and the
    // rest (company, title, school, location, each tag) after the owner's word. Only listable contacts are
    // indexed, so a merged duplicate or the self contact never reaches a search. Contentless (the text stays in
    // contacts only); its rowids are contacts' implicit rowids, which VACUUM keeps (transfer optimization). Should
    // they ever drift: INSERT INTO contact_words (contact_words) VALUES ('delete-all'), then this migration's INSERT.
    sql: `
      DROP TRIGGER contacts_search_insert;
      DROP TRIGGER contacts_search_delete;
      DROP TRIGGER contacts_search_update;
      DROP TABLE contacts_search;

      CREATE VIRTUAL TABLE contact_words USING fts5(
        name, email, other, content = '', contentless_delete = 1, tokenize = 'unicode61 remove_diacritics 2'
      );
      ${indexContactWordsSql('1', SEARCH_INDEX_SQL_4)};

      ${contactWordsTriggers(SEARCH_INDEX_SQL_4)}
    `,
  },
  {
    version: 5,
    name: 'contact JSON stored with the row',
    // Each contact keeps its JSON as the API shows it (field order, optional fields only when set) in a stored
    // generated column, so a page reads one text per row: building the objects with json_object was two thirds of
    // a page query. Generated, so every writer keeps it right and none can write it. SQLite adds stored columns
    // only by rebuilding the table: the rows are copied with their rowids (the search index's keys), the old table
    // is dropped, and its indexes and triggers are created again as migrations 1, 3 and 4 made them. Contents do
    // not change, so listing versions stay. The new table's self reference names it, and the rename updates it.
    // The copy runs with foreign keys on: a contact merged into a later row leaves a pending violation, and until
    // it clears every inserted row looks up its merged duplicates, so the copy needs that index from the start
    // (without it, 20,000 contacts with 500 such merges took 76 s instead of a fraction of a second).
    sql: `
      DROP TRIGGER owner_listing_insert;
      DROP TRIGGER owner_listing_update;
      DROP TRIGGER owner_listing_delete;
      DROP TRIGGER contact_words_insert;
      DROP TRIGGER contact_words_update;
      DROP TRIGGER contact_words_delete;
      ${contactsTableSql('contacts_v5', `\n        api_json       TEXT GENERATED ALWAYS AS (${CONTACT_API_JSON}) STORED,`)}
      CREATE INDEX contacts_v5_merged_into ON contacts_v5 (owner_id, merged_into) WHERE merged_into IS NOT NULL;
      INSERT INTO contacts_v5 (rowid, ${CONTACTS_STORED_COLUMNS}) SELECT rowid, ${CONTACTS_STORED_COLUMNS} FROM contacts;
      DROP TABLE contacts;
      ALTER TABLE contacts_v5 RENAME TO contacts;
      DROP INDEX contacts_v5_merged_into;
      ${CONTACTS_INDEXES}
      ${OWNER_LISTING_CONTACT_TRIGGERS}
      ${contactWordsTriggers(SEARCH_INDEX_SQL_4)}
    `,
  },
  {
    version: 6,
    name: 'schema readable by SQLite 3.40',
    // Debian 12's sqlite3 (3.40.1) and Python's sqlite3 refused the whole database: migration 4's triggers call
    // char() with 201 arguments, and SQLite before 3.48 allows 127. They also call concat_ws (3.44) and write to an
    // index with contentless_delete (3.43), so no write to contacts worked there either. The index is made again
    // without that option, from the same text, and the triggers give a removed row's text back to it. See
    // docs/sqlite.md for the oldest SQLite the schema supports.
    sql: `
      DROP TRIGGER contact_words_insert;
      DROP TRIGGER contact_words_update;
      DROP TRIGGER contact_words_delete;
      DROP TABLE contact_words;

      CREATE VIRTUAL TABLE contact_words USING fts5(
        name, email, other, content = '', tokenize = 'unicode61 remove_diacritics 2'
      );
      ${indexContactWordsSql('1', SEARCH_INDEX_SQL_6)};

      ${contactWordsTriggers(SEARCH_INDEX_SQL_6)}
    `,
  },
  {
    version: 7,
    name: 'change feed',
    // The change feed reads contact_changes: one row per contact of an owner, holding the owner's change_seq at its
    // last change. SQLite has one writer at a time, so seqs commit in order. Self rows are never recorded; a row that
    // leaves an owner is recorded for that owner too (it reads as a delete). changes_from: see the PostgreSQL migration.
    sql: `
      ALTER TABLE owner_listing ADD COLUMN change_seq INTEGER NOT NULL DEFAULT 0;
      ALTER TABLE owner_listing ADD COLUMN changes_from INTEGER NOT NULL DEFAULT 0;

      CREATE TABLE contact_changes (
        owner_id    TEXT NOT NULL,
        contact_id  TEXT NOT NULL,
        seq         INTEGER NOT NULL,
        changed_at  TEXT NOT NULL,
        PRIMARY KEY (owner_id, contact_id)
      ) WITHOUT ROWID;
      CREATE INDEX contact_changes_feed ON contact_changes (owner_id, seq, contact_id);
      CREATE INDEX contact_changes_age ON contact_changes (changed_at);

      ${recordChangeTrigger('contact_changes_insert', 'AFTER INSERT', 'new.is_self = 0', ['new'])}
      ${recordChangeTrigger('contact_changes_update', 'AFTER UPDATE', 'new.is_self = 0 OR old.is_self = 0', ['new', 'old'])}
      ${recordChangeTrigger('contact_changes_delete', 'AFTER DELETE', 'old.is_self = 0', ['old'])}
      CREATE TRIGGER contact_changes_owner_deleted AFTER DELETE ON users BEGIN
        DELETE FROM contact_changes WHERE owner_id = old.id;
      END;
    `,
  },
  {
    version: 8,
    name: 'oauth authorization server',
    sql: `
      -- Identifiers are SHA-256 hashes: the table never holds a usable code, token or session id.
      CREATE TABLE oauth_records (
        kind TEXT NOT NULL,
        id_hash TEXT NOT NULL,
        payload TEXT NOT NULL,
        grant_id TEXT,
        uid_hash TEXT,
        expires_at TEXT NOT NULL,
        consumed_at TEXT,
        PRIMARY KEY (kind, id_hash)
      ) WITHOUT ROWID;
      CREATE INDEX oauth_records_grant ON oauth_records (grant_id) WHERE grant_id IS NOT NULL;
      CREATE INDEX oauth_records_uid ON oauth_records (kind, uid_hash) WHERE uid_hash IS NOT NULL;
      CREATE INDEX oauth_records_expiry ON oauth_records (expires_at);
      CREATE TABLE oauth_secrets (name TEXT PRIMARY KEY, value TEXT NOT NULL, created_at TEXT NOT NULL);
      -- Made here, once, so that a server only reads them: it starts while another process holds the write lock.
      INSERT INTO oauth_secrets (name, value, created_at)
        SELECT name, lower(hex(randomblob(32))), strftime('%Y-%m-%dT%H:%M:%fZ', 'now')
        FROM (SELECT 'cookie-key' AS name UNION ALL SELECT 'csrf-key' UNION ALL SELECT 'signing-seed');
    `,
  },
  {
    version: 9,
    name: 'the service key',
    // Signs sync tokens and keys the owner's part of entity tags. Kept beside the OAuth secrets, made once here, so
    // every worker and restart agrees on it.
    sql: `
      INSERT INTO oauth_secrets (name, value, created_at)
        VALUES ('service-key', lower(hex(randomblob(32))), strftime('%Y-%m-%dT%H:%M:%fZ', 'now'));
    `,
  },
  {
    version: 10,
    name: 'listable contacts by email',
    // An import finds the owner's listable contacts holding an email, ignoring ASCII case (lower() folds only
    // ASCII here; PostgreSQL's index folds the same with COLLATE "C").
    sql: `
      CREATE INDEX contacts_email ON contacts (owner_id, lower(email))
        WHERE email IS NOT NULL AND merged_into IS NULL AND is_self = 0;
    `,
  },
  {
    version: 11,
    name: 'admin API: key display form, OAuth records by key, idempotency keys',
    // A key keeps its display form (apiKeyStart; NULL for keys made before). Each OAuth record keeps the id of the
    // API key it is bound to (oidc-provider's accountId, in the payload of grants, codes, tokens and sessions), so
    // revoking a key or deleting its owner removes them with one indexed statement. Idempotency-Keys hold the first
    // answer of an admin API request for a day (the store's claim and prune).
    sql: `
      ALTER TABLE api_keys ADD COLUMN start TEXT;

      ALTER TABLE oauth_records ADD COLUMN account_id TEXT;
      UPDATE oauth_records SET account_id = json_extract(payload, '$.accountId')
        WHERE json_type(payload, '$.accountId') = 'text';
      CREATE INDEX oauth_records_account ON oauth_records (account_id) WHERE account_id IS NOT NULL;

      CREATE TABLE idempotency_keys (
        scope            TEXT NOT NULL,
        idempotency_key  TEXT NOT NULL,
        fingerprint      TEXT NOT NULL,
        status           INTEGER,
        body             TEXT,
        created_at       TEXT NOT NULL,
        completed_at     TEXT,
        PRIMARY KEY (scope, idempotency_key),
        CHECK ((status IS NULL) = (completed_at IS NULL) AND (body IS NULL) = (completed_at IS NULL))
      ) WITHOUT ROWID;
      CREATE INDEX idempotency_keys_age ON idempotency_keys (created_at);
    `,
  },
  {
    version: 12,
    name: 'webhooks',
    // An endpoint keeps a cursor into its owner's change log (the log is the outbox: nothing is copied per change), its
    // retry state and a dispatcher's lease. Deleting a user removes the user's endpoints and their delivery attempts
    // with the user (cascades). The dispatcher's query reads only enabled endpoints; attempts are listed per endpoint,
    // latest first, and pruned by age.
    sql: `
      CREATE TABLE webhooks (
        id                      TEXT PRIMARY KEY,
        owner_id                TEXT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
        url                     TEXT NOT NULL,
        events                  TEXT NOT NULL CHECK (json_type(events) = 'array'),
        description             TEXT,
        status                  TEXT NOT NULL CHECK (status IN ('enabled', 'disabled')),
        disabled_reason         TEXT,
        sealed_secret           TEXT NOT NULL,
        sealed_previous_secret  TEXT,
        previous_secret_until   TEXT,
        cursor_seq              INTEGER NOT NULL,
        cursor_after            TEXT,
        pending_since           TEXT NOT NULL,
        failed_attempts         INTEGER NOT NULL DEFAULT 0,
        next_attempt_at         TEXT,
        lease_holder            TEXT,
        lease_until             TEXT,
        created_at              TEXT NOT NULL,
        updated_at              TEXT NOT NULL
      );
      CREATE INDEX webhooks_owner ON webhooks (owner_id, created_at);
      CREATE INDEX webhooks_enabled ON webhooks (owner_id) WHERE status = 'enabled';

      CREATE TABLE webhook_deliveries (
        webhook_id    TEXT NOT NULL REFERENCES webhooks (id) ON DELETE CASCADE,
        event_id      TEXT NOT NULL,
        type          TEXT NOT NULL,
        attempt       INTEGER NOT NULL,
        status_code   INTEGER,
        error         TEXT,
        duration_ms   INTEGER NOT NULL,
        attempted_at  TEXT NOT NULL
      );
      CREATE INDEX webhook_deliveries_latest ON webhook_deliveries (webhook_id, attempted_at DESC);
      CREATE INDEX webhook_deliveries_age ON webhook_deliveries (attempted_at);
    `,
  },
  {
    version: 13,
    name: 'idempotent answers by user',
    // An answer is kept for the user it concerns (a new key's holds the key's secret) and goes with the user; answers
    // kept before carry no user and go within their day.
    sql: `
      ALTER TABLE idempotency_keys ADD COLUMN owner_id TEXT REFERENCES users (id) ON DELETE CASCADE;
      CREATE INDEX idempotency_keys_owner ON idempotency_keys (owner_id) WHERE owner_id IS NOT NULL;
    `,
  },
  {
    version: 14,
    name: 'listable contacts by LinkedIn URL',
    // An import finds the owner's listable contacts holding a LinkedIn URL by its key (linkedinUrlKey: ASCII case, the
    // http(s) scheme, `www.`, the query, the fragment and trailing slashes ignored), written in SQL as each dialect's
    // linkedinUrlKey wrote it then.
    sql: `
      CREATE INDEX contacts_linkedin_url ON contacts (owner_id, rtrim(substr(substr(substr(lower(linkedin_url), CASE WHEN substr(lower(linkedin_url), 1, 8) = 'https://' THEN 9 WHEN substr(lower(linkedin_url), 1, 7) = 'http://' THEN 8 ELSE 1 END), CASE WHEN substr(substr(lower(linkedin_url), CASE WHEN substr(lower(linkedin_url), 1, 8) = 'https://' THEN 9 WHEN substr(lower(linkedin_url), 1, 7) = 'http://' THEN 8 ELSE 1 END), 1, 4) = 'www.' THEN 5 ELSE 1 END), 1, instr(replace(substr(substr(lower(linkedin_url), CASE WHEN substr(lower(linkedin_url), 1, 8) = 'https://' THEN 9 WHEN substr(lower(linkedin_url), 1, 7) = 'http://' THEN 8 ELSE 1 END), CASE WHEN substr(substr(lower(linkedin_url), CASE WHEN substr(lower(linkedin_url), 1, 8) = 'https://' THEN 9 WHEN substr(lower(linkedin_url), 1, 7) = 'http://' THEN 8 ELSE 1 END), 1, 4) = 'www.' THEN 5 ELSE 1 END), '#', '?') || '?', '?') - 1), '/'))
        WHERE linkedin_url IS NOT NULL AND merged_into IS NULL AND is_self = 0;
    `,
  },
];
