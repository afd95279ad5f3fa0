import type { Migration } from '../../contracts/migration.js';
import { sqlText, WORD_SEPARATORS } from './search-text.js';

/** Users, contacts and keys; the first search index; the listing's count and version. */
export const VERSIONS_1_TO_3: readonly Migration[] = [
  {
    version: 1,
    name: 'users, contacts and api keys',
    sql: `
      CREATE TABLE users (
        id          uuid PRIMARY KEY,
        email       text NOT NULL,
        name        text,
        plan        text NOT NULL CHECK (plan IN ('free', 'pro')),
        created_at  timestamptz NOT NULL,
        updated_at  timestamptz NOT NULL
      );
      CREATE UNIQUE INDEX users_email_unique ON users (lower(email));

      CREATE TABLE contacts (
        id             uuid PRIMARY KEY,
        owner_id       uuid NOT NULL REFERENCES users (id) ON DELETE CASCADE,
        is_self        boolean NOT NULL DEFAULT false,
        merged_into    uuid,
        name           text,
        email          text,
        phone          text,
        company        text,
        title          text,
        school         text,
        linkedin_url   text,
        location       text,
        description    text,
        tags           text[],
        enrichment     jsonb CHECK (enrichment IS NULL OR jsonb_typeof(enrichment) = 'object'),
        enriched_at    timestamptz,
        source         text,
        birthday       text,
        research_data  jsonb CHECK (research_data IS NULL OR jsonb_typeof(research_data) = 'object'),
        researched_at  timestamptz,
        created_at     timestamptz NOT NULL,
        updated_at     timestamptz NOT NULL,
        UNIQUE (owner_id, id),
        -- A contact can only be merged into a contact of the same owner.
        FOREIGN KEY (owner_id, merged_into) REFERENCES contacts (owner_id, id),
        CHECK (merged_into IS NULL OR merged_into <> id)
      );
      CREATE INDEX contacts_listable ON contacts (owner_id, created_at, id) WHERE merged_into IS NULL AND NOT is_self;
      CREATE UNIQUE INDEX contacts_one_self_row ON contacts (owner_id) WHERE is_self;
      CREATE INDEX contacts_merged_into ON contacts (owner_id, merged_into) WHERE merged_into IS NOT NULL;

      CREATE TABLE api_keys (
        id            uuid PRIMARY KEY,
        owner_id      uuid NOT NULL REFERENCES users (id) ON DELETE CASCADE,
        label         text,
        scopes        text[] NOT NULL,
        secret_hash   text NOT NULL UNIQUE,
        created_at    timestamptz NOT NULL,
        expires_at    timestamptz,
        last_used_at  timestamptz,
        revoked_at    timestamptz
      );
      CREATE INDEX api_keys_owner ON api_keys (owner_id, created_at);
    `,
  },
  {
    version: 2,
    name: 'contact search index',
    // Two stored generated columns, so a search computes nothing heavy per row: search_text, the searched fields in
    // lower case joined by U+001F (never in a query, so no match spans two fields), and search_words, the same with
    // every word separator turned into a space, for the word-prefix rank. The trigram GIN index answers LIKE '%…%'
    // for queries of 3+ characters, with owner_id in the same index (btree_gin) so other owners' rows are never read.
    // pg_trgm and btree_gin are trusted extensions: a superuser or the database owner can create them.
    sql: `
      DO $$
      BEGIN
        CREATE EXTENSION IF NOT EXISTS pg_trgm;
        CREATE EXTENSION IF NOT EXISTS btree_gin;
      EXCEPTION WHEN insufficient_privilege OR undefined_file THEN
        RAISE EXCEPTION 'Contact search needs the PostgreSQL extensions pg_trgm and btree_gin (package postgresql-contrib), and this role could not create them: %. Have a superuser run "CREATE EXTENSION pg_trgm; CREATE EXTENSION btree_gin;" in this database, then migrate again.', SQLERRM;
      END
      $$;

      -- IMMUTABLE for the generated columns: concat_ws and array_to_string are only STABLE in general, but immutable on text.
      CREATE FUNCTION contacts_search_text(name text, email text, company text, title text, school text, location text, tags text[])
      RETURNS text LANGUAGE sql IMMUTABLE PARALLEL SAFE
      AS $$ SELECT lower(concat_ws(E'\\x1f', name, email, company, title, school, location, array_to_string(tags, E'\\x1f'))) $$;

      ALTER TABLE contacts
        ADD COLUMN search_text text
          GENERATED ALWAYS AS (contacts_search_text(name, email, company, title, school, location, tags)) STORED,
        ADD COLUMN search_words text
          GENERATED ALWAYS AS (' ' || translate(contacts_search_text(name, email, company, title, school, location, tags),
            ${sqlText(WORD_SEPARATORS)}, ${sqlText(' '.repeat(WORD_SEPARATORS.length))})) STORED;
      CREATE INDEX contacts_search_trgm ON contacts USING gin (owner_id, search_text gin_trgm_ops)
        WHERE merged_into IS NULL AND NOT is_self;
    `,
  },
  {
    version: 3,
    name: 'listing state per owner',
    // The database keeps each owner's listable count and a version that every statement touching the owner's
    // contacts bumps, so a page costs no COUNT(*) and caches keyed by version stay coherent with any writer,
    // including direct SQL by another process. The contacts triggers are per statement, with transition tables:
    // an import of 100k rows is one owner_listing update per statement and owner, not 100k. Owners are updated
    // one at a time in id order, so two statements spanning several owners lock their rows in the same order.
    // The tables are locked first: no write may slip in between the backfill's count and the triggers.
    // Written to be harmless if run again (a re-run recounts and bumps every version).
    sql: `
      LOCK TABLE users, contacts IN SHARE ROW EXCLUSIVE MODE;

      CREATE TABLE IF NOT EXISTS owner_listing (
        owner_id  uuid PRIMARY KEY REFERENCES users (id) ON DELETE CASCADE,
        total     integer NOT NULL DEFAULT 0,
        version   bigint NOT NULL DEFAULT 0
      );

      CREATE OR REPLACE FUNCTION owner_listing_user_created() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        INSERT INTO owner_listing (owner_id) VALUES (NEW.id) ON CONFLICT (owner_id) DO NOTHING;
        RETURN NULL;
      END
      $$;
      DROP TRIGGER IF EXISTS owner_listing_user ON users;
      CREATE TRIGGER owner_listing_user AFTER INSERT ON users
        FOR EACH ROW EXECUTE FUNCTION owner_listing_user_created();

      -- One function for the three triggers; each branch reads only the transition tables its event has.
      CREATE OR REPLACE FUNCTION owner_listing_contacts_changed() RETURNS trigger LANGUAGE plpgsql AS $$
      DECLARE
        changes refcursor;
        change record;
      BEGIN
        IF TG_OP = 'INSERT' THEN
          OPEN changes FOR SELECT owner_id, count(*) FILTER (WHERE merged_into IS NULL AND NOT is_self) AS delta
            FROM new_rows GROUP BY owner_id ORDER BY owner_id;
        ELSIF TG_OP = 'DELETE' THEN
          OPEN changes FOR SELECT owner_id, -count(*) FILTER (WHERE merged_into IS NULL AND NOT is_self) AS delta
            FROM old_rows GROUP BY owner_id ORDER BY owner_id;
        ELSE
          OPEN changes FOR SELECT owner_id, sum(delta) AS delta FROM (
              SELECT owner_id, (merged_into IS NULL AND NOT is_self)::integer AS delta FROM new_rows
              UNION ALL
              SELECT owner_id, -(merged_into IS NULL AND NOT is_self)::integer FROM old_rows
            ) moved GROUP BY owner_id ORDER BY owner_id;
        END IF;
        LOOP
          FETCH changes INTO change;
          EXIT WHEN NOT FOUND;
          UPDATE owner_listing SET version = version + 1, total = total + change.delta WHERE owner_id = change.owner_id;
        END LOOP;
        CLOSE changes;
        RETURN NULL;
      END
      $$;
      DROP TRIGGER IF EXISTS owner_listing_insert ON contacts;
      DROP TRIGGER IF EXISTS owner_listing_update ON contacts;
      DROP TRIGGER IF EXISTS owner_listing_delete ON contacts;
      CREATE TRIGGER owner_listing_insert AFTER INSERT ON contacts REFERENCING NEW TABLE AS new_rows
        FOR EACH STATEMENT EXECUTE FUNCTION owner_listing_contacts_changed();
      CREATE TRIGGER owner_listing_update AFTER UPDATE ON contacts REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows
        FOR EACH STATEMENT EXECUTE FUNCTION owner_listing_contacts_changed();
      CREATE TRIGGER owner_listing_delete AFTER DELETE ON contacts REFERENCING OLD TABLE AS old_rows
        FOR EACH STATEMENT EXECUTE FUNCTION owner_listing_contacts_changed();

      -- TRUNCATE fires no DELETE trigger: it empties every owner's listing.
      CREATE OR REPLACE FUNCTION owner_listing_contacts_truncated() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        UPDATE owner_listing SET version = version + 1, total = 0;
        RETURN NULL;
      END
      $$;
      DROP TRIGGER IF EXISTS owner_listing_truncate ON contacts;
      CREATE TRIGGER owner_listing_truncate AFTER TRUNCATE ON contacts
        FOR EACH STATEMENT EXECUTE FUNCTION owner_listing_contacts_truncated();

      INSERT INTO owner_listing (owner_id, total, version)
        SELECT u.id, count(c.id), 1
        FROM users u LEFT JOIN contacts c ON c.owner_id = u.id AND c.merged_into IS NULL AND NOT c.is_self
        GROUP BY u.id
      ON CONFLICT (owner_id) DO UPDATE SET total = EXCLUDED.total, version = owner_listing.version + 1;
    `,
  },
];
