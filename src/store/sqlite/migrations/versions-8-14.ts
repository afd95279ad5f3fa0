import type { Migration } from '../../contracts/migration.js';

/** OAuth, the service key, the email index, Idempotency-Keys and key display forms, webhooks, answers kept with their user, the LinkedIn URL index. */
export const VERSIONS_8_TO_14: readonly Migration[] = [
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
