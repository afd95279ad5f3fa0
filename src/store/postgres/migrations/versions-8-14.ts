import { CONTACT_COLUMNS_V1, CONTACT_FIELDS_V1 } from '../../contact-fields-v1.js';
import type { Migration } from '../../contracts/migration.js';
import {
  apiJsonParameters,
  COMPACT_CONTACT_API_JSON,
  OBJECT_COLUMNS_V1,
  TYPES_OF_MIGRATION_1,
  TYPES_OF_MIGRATION_8,
} from './contact-json.js';

/** Compact stored JSON; the service key; the email index; the admin API's records; webhooks; answers kept with their user; the LinkedIn URL index. */
export const VERSIONS_8_TO_14: readonly Migration[] = [
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
