import type { Migration } from '../../contracts/migration.js';
import {
  CONTACT_API_JSON,
  CONTACTS_INDEXES,
  CONTACTS_STORED_COLUMNS,
  contactsTableSql,
  OWNER_LISTING_CONTACT_TRIGGERS,
  recordChangeTrigger,
} from './contacts-table.js';
import { contactWordsTriggers, indexContactWordsSql, SEARCH_INDEX_SQL_4, SEARCH_INDEX_SQL_6 } from './search-index.js';

/** Users, keys and contacts; search; the listing's count and version; the stored JSON; a schema SQLite 3.40 reads; the change feed. */
export const VERSIONS_1_TO_7: readonly Migration[] = [
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
];
