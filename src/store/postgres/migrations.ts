import type { ContactFieldKind } from '../../domain/contact.js';
import { CONTACT_COLUMNS_V1, CONTACT_FIELDS_V1, type MigrationContactField } from '../contact-fields-v1.js';
import { contactJsonExpression, namesAndValues } from '../contact-row.js';
import type { Migration } from '../contracts/migration.js';

/** Characters migration 2's search_words column turned into spaces, as that migration was written (it is frozen). */
const WORD_SEPARATORS = ' \t\n\r-_.,;:!?@#/\\&+()[]{}<>\'"|~*=\u001f';

/**
 * Latin letters, and the combining marks of the accents that migration 4's folding drops after them: the classes of
 * domain/search.ts when it was written.
 */
const LATIN_LETTER_CLASS =
  'A-Za-z\u00aa\u00ba\u00c0-\u00d6\u00d8-\u00f6\u00f8-\u02af\u1d00-\u1dbf\u1e00-\u1eff\u2c60-\u2c7f\ua720-\ua7ff\uab30-\uab6f';
const LATIN_ACCENT_CLASS = '\u0300-\u036f';

/** Symbols that glibc classifies as alphanumeric: circled, squared and negative Latin letters (migration 4). */
const LETTER_SYMBOLS = '\u24b6-\u24e9\u{1f130}-\u{1f149}\u{1f150}-\u{1f169}\u{1f170}-\u{1f189}';

/** Search lexemes (migration 4) keep this many characters of a word, a name or an email. */
const SEARCH_LEXEME_LENGTH = 200;
/** The search index holds the words of this many characters of a contact's searched text. */
const SEARCH_TEXT_LENGTH = 20_000;

/** The API's canonical date-time: ISO 8601 UTC with milliseconds (microseconds truncated, as parseTimestamptz does). */
const isoMillis = (column: string) => `to_char(${column} AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`;

/** A contact's JSON as the API shows it, from the function parameters named after its columns (migration 5). */
const CONTACT_API_JSON = contactJsonExpression(
  CONTACT_FIELDS_V1,
  (pairs) => `json_build_object(${namesAndValues(pairs)})`,
  ({ name, kind }) => (kind === 'timestamp' ? isoMillis(name) : name),
);

/** The column type of each kind of field, as migration 1 created them. */
const TYPES_OF_MIGRATION_1: Readonly<Record<ContactFieldKind, string>> = {
  id: 'uuid',
  text: 'text',
  tags: 'text[]',
  object: 'jsonb',
  timestamp: 'timestamptz',
};
/** Free-form objects: jsonb until migration 8, json (the text as written) since. */
const TYPES_OF_MIGRATION_8 = { ...TYPES_OF_MIGRATION_1, object: 'json' };
const OBJECT_COLUMNS_V1 = CONTACT_FIELDS_V1.filter(({ kind }) => kind === 'object').map(({ name }) => name);
/** The parameters of contacts_api_json, named and typed after the columns. */
const apiJsonParameters = (fields: readonly MigrationContactField[], types: Readonly<Record<ContactFieldKind, string>>) =>
  fields.map(({ name, kind }) => `${name} ${types[kind]}`).join(', ');

/** A contact's value as JSON text: strings and arrays through to_json, objects as stored, `null` when NULL. */
function jsonTextOf({ name, kind }: MigrationContactField): string {
  if (kind === 'object') return `coalesce(${name}::text, 'null')`;
  return `coalesce(to_json(${kind === 'timestamp' ? isoMillis(name) : name})::text, 'null')`;
}

/**
 * A contact's JSON as the API shows it, byte for byte as SQLite's json_object writes it (migration 8): no space
 * between tokens, strings escaped by to_json as SQLite escapes them, objects as written. json_build_object puts
 * ` : ` and `, ` between members.
 */
const COMPACT_CONTACT_API_JSON = contactJsonExpression(
  CONTACT_FIELDS_V1,
  (pairs) => `'{' || ${pairs.map(([name, value], index) => `'${index === 0 ? '' : ','}"${name}":' || ${value}`).join(' || ')} || '}'`,
  jsonTextOf,
);

/** A standard SQL string literal (standard_conforming_strings: only quotes are doubled). */
function sqlText(text: string): string {
  return `'${text.replaceAll("'", "''")}'`;
}

/**
 * The PostgreSQL schema: the same tables, constraints and indexes as SQLITE_MIGRATIONS, in native types
 * (uuid ids, timestamptz, boolean is_self, text[] for tags and scopes, jsonb objects).
 */
export const POSTGRES_MIGRATIONS: readonly Migration[] = [
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
  {
    version: 4,
    name: 'contact search by word prefix',
    // Replaces migration 2's trigram index. Each contact stores its search lexemes (a generated tsvector, so every
    // writer keeps it right), all under a key of its owner (the last 12 hex digits of the owner id): a lookup reads
    // only its owner's part of the GIN index, and a prefix query ('key:jo':*) never merges other owners' words.
    //   key:word    every word of name, email, company, title, school, location and each tag
    //   key^words   the words of the name, joined by one space (exact and prefix matches of a whole name)
    //   key@words   the same for the email
    // Words follow the domain's folding (lower case, Latin accents dropped, NFC) and are split at anything that is
    // not alphanumeric. Within tsvector's limits, the index holds the words of a contact's first
    // ${SEARCH_TEXT_LENGTH} characters of searched text, each word (and each name or email) cut to
    // ${SEARCH_LEXEME_LENGTH} characters; contacts_search_query cuts the query alike. PL/pgSQL for the lexemes: an SQL
    // function calling concat_ws (only STABLE) could not be inlined and would cost four times as much per write.
    sql: `
      DROP INDEX contacts_search_trgm;
      ALTER TABLE contacts DROP COLUMN search_text, DROP COLUMN search_words;
      DROP FUNCTION contacts_search_text(text, text, text, text, text, text, text[]);

      -- The folded words of a text, separated by single spaces. The C library counts the circled and squared Latin
      -- letters (Ⓐ, 🅰: Unicode symbols) as alphanumeric; search does not, so they separate words first.
      CREATE FUNCTION contacts_search_words(value text) RETURNS text LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
      AS $$
        SELECT btrim(regexp_replace(
          CASE WHEN octet_length(value) = char_length(value) THEN lower(value)
            ELSE regexp_replace(normalize(regexp_replace(normalize(lower(value), NFD),
              ${sqlText(`([${LATIN_LETTER_CLASS}])[${LATIN_ACCENT_CLASS}]+`)}, '\\1', 'g'), NFC), ${sqlText(`[${LETTER_SYMBOLS}]`)}, ' ', 'g')
          END, '[^[:alnum:]]+', ' ', 'g'))
      $$;

      -- IMMUTABLE for the generated column: concat_ws and array_to_string are only STABLE in general, but immutable on text.
      CREATE FUNCTION contacts_search_lexemes(owner_id uuid, name text, email text, company text, title text, school text,
        location text, tags text[]) RETURNS tsvector LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE
      AS $$
      DECLARE
        key text := right(owner_id::text, 12);
        words text := contacts_search_words(left(concat_ws(' ', name, email, company, title, school, location,
          array_to_string(tags, ' ')), ${SEARCH_TEXT_LENGTH}));
        lexemes text := '';
      BEGIN
        IF words <> '' THEN
          IF char_length(words) > ${SEARCH_LEXEME_LENGTH} THEN
            words := regexp_replace(words, '(\\S{${SEARCH_LEXEME_LENGTH}})\\S+', '\\1', 'g');
          END IF;
          lexemes := '''' || key || ':' || replace(words, ' ', ''' ''' || key || ':') || '''';
        END IF;
        words := left(contacts_search_words(name), ${SEARCH_LEXEME_LENGTH});
        IF words <> '' THEN
          lexemes := lexemes || ' ''' || key || '^' || words || '''';
        END IF;
        words := left(contacts_search_words(email), ${SEARCH_LEXEME_LENGTH});
        IF words <> '' THEN
          lexemes := lexemes || ' ''' || key || '@' || words || '''';
        END IF;
        RETURN lexemes::tsvector;
      END
      $$;

      -- The tsquery of one scope of a search (see SearchScope), from the query's words as this database splits them.
      -- Lexemes hold no quote or backslash (words are alphanumeric, keys hexadecimal), so quoting needs no escapes.
      CREATE FUNCTION contacts_search_query(owner_id uuid, scope text, query text) RETURNS tsquery
      LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
      AS $$
        SELECT (CASE
            WHEN phrase IS NULL THEN NULL
            WHEN scope = 'words' THEN (SELECT string_agg(format('''%s:%s'':*', key, left(word, ${SEARCH_LEXEME_LENGTH})), ' & ')
              FROM unnest(string_to_array(phrase, ' ')) AS word)
            WHEN scope = 'exact' AND char_length(phrase) < ${SEARCH_LEXEME_LENGTH} THEN format('''%1$s^%2$s'' | ''%1$s@%2$s''', key, phrase)
            ELSE format('''%1$s^%2$s'':* | ''%1$s@%2$s'':*', key, left(phrase, ${SEARCH_LEXEME_LENGTH}))
          END)::tsquery
        FROM (SELECT right(owner_id::text, 12) AS key, nullif(contacts_search_words(query), '') AS phrase) AS q
      $$;

      ALTER TABLE contacts ADD COLUMN search_lexemes tsvector
        GENERATED ALWAYS AS (contacts_search_lexemes(owner_id, name, email, company, title, school, location, tags)) STORED;
      CREATE INDEX contacts_search_lexemes ON contacts USING gin (search_lexemes) WHERE merged_into IS NULL AND NOT is_self;
    `,
  },
  {
    version: 5,
    name: 'contact JSON stored with the row',
    // Each contact keeps its JSON as the API shows it (field order, ISO dates with milliseconds, optional fields
    // only when set) in a stored generated column, so a page is its rows' stored texts joined: building 50 objects
    // with json_build_object per request was most of a page query's time. Generated, so every writer (imports,
    // merges, direct SQL) keeps it right and none can write it. A generated column needs an IMMUTABLE function, and
    // this one is: to_char reads only the numeric fields of a UTC timestamp, and json_build_object of text, uuid,
    // text[] and jsonb depends on no setting. Adding the column rewrites the contacts table once, under an exclusive lock.
    sql: `
      CREATE FUNCTION contacts_api_json(${apiJsonParameters(CONTACT_FIELDS_V1, TYPES_OF_MIGRATION_1)})
      RETURNS text LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE
      AS $$
      BEGIN
        RETURN (${CONTACT_API_JSON})::text;
      END
      $$;

      ALTER TABLE contacts ADD COLUMN api_json text
        GENERATED ALWAYS AS (contacts_api_json(${CONTACT_COLUMNS_V1.join(', ')})) STORED;
    `,
  },
  {
    version: 6,
    name: 'change feed',
    // The change feed (GET /api/v1/contacts/changes) reads contact_changes: one row per contact an owner's statements
    // touched, holding the owner's change_seq at its last change. The seq is taken under the owner_listing row lock,
    // held to commit, so one owner's seqs commit in order and a reader that has seen seq S has seen every change up to
    // it: a sequence would hand out numbers in call order, not commit order, and a reader could step over a change
    // still in flight. The listing trigger's function is replaced, so both are updated under one lock, owners in id
    // order as before. Self rows are never recorded. changes_from is the first seq the log is complete from: TRUNCATE
    // cannot say which contacts it removed, so it moves changes_from past every token (410, list again).
    sql: `
      ALTER TABLE owner_listing ADD COLUMN change_seq bigint NOT NULL DEFAULT 0;
      ALTER TABLE owner_listing ADD COLUMN changes_from bigint NOT NULL DEFAULT 0;

      CREATE TABLE contact_changes (
        owner_id    uuid NOT NULL,
        contact_id  uuid NOT NULL,
        seq         bigint NOT NULL,
        changed_at  timestamptz NOT NULL,
        PRIMARY KEY (owner_id, contact_id)
      );
      CREATE INDEX contact_changes_feed ON contact_changes (owner_id, seq, contact_id);
      CREATE INDEX contact_changes_age ON contact_changes (changed_at);

      CREATE OR REPLACE FUNCTION owner_listing_contacts_changed() RETURNS trigger LANGUAGE plpgsql AS $$
      DECLARE
        changes refcursor;
        change record;
        owner_seq bigint;
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
          UPDATE owner_listing SET version = version + 1, total = total + change.delta, change_seq = change_seq + 1
            WHERE owner_id = change.owner_id RETURNING change_seq INTO owner_seq;
          -- No listing row: the owner is being deleted, and the owner's changes with it.
          IF owner_seq IS NULL THEN
            CONTINUE;
          ELSIF TG_OP = 'INSERT' THEN
            INSERT INTO contact_changes (owner_id, contact_id, seq, changed_at)
              SELECT owner_id, id, owner_seq, statement_timestamp() FROM new_rows WHERE owner_id = change.owner_id AND NOT is_self
              ON CONFLICT (owner_id, contact_id) DO UPDATE SET seq = EXCLUDED.seq, changed_at = EXCLUDED.changed_at;
          ELSIF TG_OP = 'DELETE' THEN
            INSERT INTO contact_changes (owner_id, contact_id, seq, changed_at)
              SELECT owner_id, id, owner_seq, statement_timestamp() FROM old_rows WHERE owner_id = change.owner_id AND NOT is_self
              ON CONFLICT (owner_id, contact_id) DO UPDATE SET seq = EXCLUDED.seq, changed_at = EXCLUDED.changed_at;
          ELSE
            INSERT INTO contact_changes (owner_id, contact_id, seq, changed_at)
              SELECT change.owner_id, id, owner_seq, statement_timestamp() FROM (
                SELECT id, is_self FROM new_rows WHERE owner_id = change.owner_id
                UNION
                SELECT id, is_self FROM old_rows WHERE owner_id = change.owner_id
              ) touched GROUP BY id HAVING NOT bool_and(is_self)
              ON CONFLICT (owner_id, contact_id) DO UPDATE SET seq = EXCLUDED.seq, changed_at = EXCLUDED.changed_at;
          END IF;
        END LOOP;
        CLOSE changes;
        RETURN NULL;
      END
      $$;

      -- A deleted user's changes go with the user. Named to fire after the foreign keys' cascades (triggers fire in name order).
      CREATE FUNCTION contact_changes_owner_deleted() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        DELETE FROM contact_changes WHERE owner_id IN (SELECT id FROM old_users);
        RETURN NULL;
      END
      $$;
      CREATE TRIGGER zz_contact_changes_owner_deleted AFTER DELETE ON users REFERENCING OLD TABLE AS old_users
        FOR EACH STATEMENT EXECUTE FUNCTION contact_changes_owner_deleted();

      CREATE OR REPLACE FUNCTION owner_listing_contacts_truncated() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        UPDATE owner_listing SET version = version + 1, total = 0, change_seq = change_seq + 1, changes_from = change_seq + 1;
        DELETE FROM contact_changes;
        RETURN NULL;
      END
      $$;
    `,
  },
  {
    version: 7,
    name: 'oauth authorization server',
    sql: `
      -- Identifiers are SHA-256 hashes: the table never holds a usable code, token or session id.
      CREATE TABLE oauth_records (
        kind text NOT NULL,
        id_hash text NOT NULL,
        payload text NOT NULL,
        grant_id text,
        uid_hash text,
        expires_at timestamptz NOT NULL,
        consumed_at timestamptz,
        PRIMARY KEY (kind, id_hash)
      );
      CREATE INDEX oauth_records_grant ON oauth_records (grant_id) WHERE grant_id IS NOT NULL;
      CREATE INDEX oauth_records_uid ON oauth_records (kind, uid_hash) WHERE uid_hash IS NOT NULL;
      CREATE INDEX oauth_records_expiry ON oauth_records (expires_at);
      CREATE TABLE oauth_secrets (name text PRIMARY KEY, value text NOT NULL, created_at timestamptz NOT NULL);
      -- Made here, once, so that a server only reads them. gen_random_uuid() draws from pg_strong_random: two make
      -- 244 random bits.
      INSERT INTO oauth_secrets (name, value, created_at)
        SELECT name, replace(gen_random_uuid()::text || gen_random_uuid()::text, '-', ''), now()
        FROM unnest(ARRAY['cookie-key', 'csrf-key', 'signing-seed']) AS name;
    `,
  },
  {
    version: 8,
    name: 'contact JSON byte for byte as on SQLite',
    // Objects become json, which keeps the text a writer sent (JSON.stringify's, as SQLite keeps it) where jsonb
    // re-orders members and spaces them; api_json is built without json_build_object's spaces. Existing objects are
    // written compactly, in the member order jsonb kept (their original order is gone). The contacts table is rewritten
    // twice under an exclusive lock: docs/operations.md gives the time per million contacts.
    sql: `
      CREATE FUNCTION pg_temp.compact_json(value jsonb) RETURNS text LANGUAGE plpgsql IMMUTABLE STRICT AS $$
      BEGIN
        RETURN CASE jsonb_typeof(value)
          WHEN 'object' THEN '{' || coalesce((SELECT string_agg(to_json(key)::text || ':' || pg_temp.compact_json(item), ',' ORDER BY position)
            FROM jsonb_each(value) WITH ORDINALITY AS member(key, item, position)), '') || '}'
          WHEN 'array' THEN '[' || coalesce((SELECT string_agg(pg_temp.compact_json(item), ',' ORDER BY position)
            FROM jsonb_array_elements(value) WITH ORDINALITY AS element(item, position)), '') || ']'
          ELSE value::text
        END;
      END
      $$;

      ALTER TABLE contacts DROP COLUMN api_json;
      DROP FUNCTION contacts_api_json(${apiJsonParameters(CONTACT_FIELDS_V1, TYPES_OF_MIGRATION_1)});
      ALTER TABLE contacts
        ${OBJECT_COLUMNS_V1.map(
          (column) => `DROP CONSTRAINT contacts_${column}_check,
        ALTER COLUMN ${column} TYPE json USING pg_temp.compact_json(${column})::json,
        ADD CONSTRAINT contacts_${column}_check CHECK (${column} IS NULL OR json_typeof(${column}) = 'object')`,
        ).join(',\n        ')};

      CREATE FUNCTION contacts_api_json(${apiJsonParameters(CONTACT_FIELDS_V1, TYPES_OF_MIGRATION_8)})
      RETURNS text LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE
      AS $$
      BEGIN
        RETURN ${COMPACT_CONTACT_API_JSON};
      END
      $$;
      ALTER TABLE contacts ADD COLUMN api_json text
        GENERATED ALWAYS AS (contacts_api_json(${CONTACT_COLUMNS_V1.join(', ')})) STORED;
    `,
  },
  {
    version: 9,
    name: 'the service key',
    // Signs sync tokens and keys the owner's part of entity tags. Kept beside the OAuth secrets, made once here, so
    // every worker and restart agrees on it.
    sql: `
      INSERT INTO oauth_secrets (name, value, created_at)
        VALUES ('service-key', replace(gen_random_uuid()::text || gen_random_uuid()::text, '-', ''), now());
    `,
  },
  {
    version: 10,
    name: 'listable contacts by email',
    // An import finds the owner's listable contacts holding an email, ignoring ASCII case only, as SQLite's lower()
    // does: under COLLATE "C", lower() folds ASCII letters alone. The owner is inside the one indexed expression:
    // with (owner_id, …) columns, statistics taken before an owner's first import (one contact) made the planner
    // read that owner's contacts through contacts_listable once per email looked up instead (minutes per 100,000).
    sql: `
      CREATE INDEX contacts_email ON contacts ((owner_id::text || lower(email COLLATE "C")))
        WHERE email IS NOT NULL AND merged_into IS NULL AND NOT is_self;
    `,
  },
  {
    version: 11,
    name: 'admin API: key display form, OAuth records by key, idempotency keys',
    // As SQLite's migration 11. account_id is text: oidc-provider's accountId is whatever the server names an
    // account by (a key id here), and it is compared with api_keys.id as text.
    sql: `
      ALTER TABLE api_keys ADD COLUMN start text;

      ALTER TABLE oauth_records ADD COLUMN account_id text;
      UPDATE oauth_records SET account_id = payload::jsonb ->> 'accountId'
        WHERE jsonb_typeof(payload::jsonb -> 'accountId') = 'string';
      CREATE INDEX oauth_records_account ON oauth_records (account_id) WHERE account_id IS NOT NULL;

      CREATE TABLE idempotency_keys (
        scope            text NOT NULL,
        idempotency_key  text NOT NULL,
        fingerprint      text NOT NULL,
        status           integer,
        body             text,
        created_at       timestamptz NOT NULL,
        completed_at     timestamptz,
        PRIMARY KEY (scope, idempotency_key),
        CHECK ((status IS NULL) = (completed_at IS NULL) AND (body IS NULL) = (completed_at IS NULL))
      );
      CREATE INDEX idempotency_keys_age ON idempotency_keys (created_at);
    `,
  },
  {
    version: 12,
    name: 'webhooks',
    // As SQLite's migration 12, in native types. The dispatcher leases endpoints with FOR UPDATE SKIP LOCKED, so two
    // processes never lease the same one.
    sql: `
      CREATE TABLE webhooks (
        id                      uuid PRIMARY KEY,
        owner_id                uuid NOT NULL REFERENCES users (id) ON DELETE CASCADE,
        url                     text NOT NULL,
        events                  text[] NOT NULL,
        description             text,
        status                  text NOT NULL CHECK (status IN ('enabled', 'disabled')),
        disabled_reason         text,
        sealed_secret           text NOT NULL,
        sealed_previous_secret  text,
        previous_secret_until   timestamptz,
        cursor_seq              bigint NOT NULL,
        cursor_after            uuid,
        pending_since           timestamptz NOT NULL,
        failed_attempts         integer NOT NULL DEFAULT 0,
        next_attempt_at         timestamptz,
        lease_holder            text,
        lease_until             timestamptz,
        created_at              timestamptz NOT NULL,
        updated_at              timestamptz NOT NULL
      );
      CREATE INDEX webhooks_owner ON webhooks (owner_id, created_at);
      CREATE INDEX webhooks_enabled ON webhooks (owner_id) WHERE status = 'enabled';

      CREATE TABLE webhook_deliveries (
        webhook_id    uuid NOT NULL REFERENCES webhooks (id) ON DELETE CASCADE,
        event_id      text NOT NULL,
        type          text NOT NULL,
        attempt       integer NOT NULL,
        status_code   integer,
        error         text,
        duration_ms   integer NOT NULL,
        attempted_at  timestamptz NOT NULL
      );
      CREATE INDEX webhook_deliveries_latest ON webhook_deliveries (webhook_id, attempted_at DESC);
      CREATE INDEX webhook_deliveries_age ON webhook_deliveries (attempted_at);
    `,
  },
  {
    version: 13,
    name: 'idempotent answers by user',
    // As SQLite's migration 13.
    sql: `
      ALTER TABLE idempotency_keys ADD COLUMN owner_id uuid REFERENCES users (id) ON DELETE CASCADE;
      CREATE INDEX idempotency_keys_owner ON idempotency_keys (owner_id) WHERE owner_id IS NOT NULL;
    `,
  },
  {
    version: 14,
    name: 'listable contacts by LinkedIn URL',
    // As SQLite's migration 14, the owner inside the one indexed expression as in migration 10 (contacts_email).
    sql: `
      CREATE INDEX contacts_linkedin_url ON contacts ((owner_id::text || rtrim(substr(substr(substr(lower(linkedin_url COLLATE "C"), CASE WHEN substr(lower(linkedin_url COLLATE "C"), 1, 8) = 'https://' THEN 9 WHEN substr(lower(linkedin_url COLLATE "C"), 1, 7) = 'http://' THEN 8 ELSE 1 END), CASE WHEN substr(substr(lower(linkedin_url COLLATE "C"), CASE WHEN substr(lower(linkedin_url COLLATE "C"), 1, 8) = 'https://' THEN 9 WHEN substr(lower(linkedin_url COLLATE "C"), 1, 7) = 'http://' THEN 8 ELSE 1 END), 1, 4) = 'www.' THEN 5 ELSE 1 END), 1, strpos(replace(substr(substr(lower(linkedin_url COLLATE "C"), CASE WHEN substr(lower(linkedin_url COLLATE "C"), 1, 8) = 'https://' THEN 9 WHEN substr(lower(linkedin_url COLLATE "C"), 1, 7) = 'http://' THEN 8 ELSE 1 END), CASE WHEN substr(substr(lower(linkedin_url COLLATE "C"), CASE WHEN substr(lower(linkedin_url COLLATE "C"), 1, 8) = 'https://' THEN 9 WHEN substr(lower(linkedin_url COLLATE "C"), 1, 7) = 'http://' THEN 8 ELSE 1 END), 1, 4) = 'www.' THEN 5 ELSE 1 END), '#', '?') || '?', '?') - 1), '/')))
        WHERE linkedin_url IS NOT NULL AND merged_into IS NULL AND NOT is_self;
    `,
  },
];
