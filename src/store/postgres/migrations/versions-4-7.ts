import { CONTACT_COLUMNS_V1, CONTACT_FIELDS_V1 } from '../../contact-fields-v1.js';
import type { Migration } from '../../contracts/migration.js';
import { apiJsonParameters, CONTACT_API_JSON, TYPES_OF_MIGRATION_1 } from './contact-json.js';
import {
  LATIN_ACCENT_CLASS,
  LATIN_LETTER_CLASS,
  LETTER_SYMBOLS,
  SEARCH_LEXEME_LENGTH,
  SEARCH_TEXT_LENGTH,
  sqlText,
} from './search-text.js';

/** Search by word prefix; contacts' stored JSON; the change feed; the OAuth server. */
export const VERSIONS_4_TO_7: readonly Migration[] = [
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
];
