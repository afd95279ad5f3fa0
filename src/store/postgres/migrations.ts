import type { Migration } from '../migration.js';

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
];
