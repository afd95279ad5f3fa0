import type { Migration } from '../migration.js';

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

      CREATE TABLE contacts (
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
        updated_at     TEXT NOT NULL,
        UNIQUE (owner_id, id),
        -- A contact can only be merged into a contact of the same owner.
        FOREIGN KEY (owner_id, merged_into) REFERENCES contacts (owner_id, id),
        CHECK (merged_into IS NULL OR merged_into <> id)
      );
      CREATE INDEX contacts_listable ON contacts (owner_id, created_at, id) WHERE merged_into IS NULL AND is_self = 0;
      CREATE UNIQUE INDEX contacts_one_self_row ON contacts (owner_id) WHERE is_self = 1;
      CREATE INDEX contacts_merged_into ON contacts (owner_id, merged_into) WHERE merged_into IS NOT NULL;

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
      CREATE TRIGGER owner_listing_insert AFTER INSERT ON contacts BEGIN
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
      END;
    `,
  },
];
