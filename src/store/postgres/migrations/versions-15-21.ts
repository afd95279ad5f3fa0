import type { Migration } from '../../contracts/migration.js';

/** Deleted contacts' names in the change log, and when a TRUNCATE cut it short. */
export const VERSIONS_15_TO_21: readonly Migration[] = [
  {
    version: 15,
    name: 'deleted contacts keep their names in the change log',
    // As SQLite's migration 15, by a trigger of its own that fires after the change is recorded (triggers fire in name
    // order), so the recording function stays as migration 6 wrote it. changes_from_at is when a TRUNCATE last moved
    // changes_from: a replay from a time before it would miss the contacts it removed.
    sql: `
      ALTER TABLE contact_changes ADD COLUMN deleted_name text;
      ALTER TABLE owner_listing ADD COLUMN changes_from_at timestamptz;

      CREATE FUNCTION contact_changes_deleted_name() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        UPDATE contact_changes ch SET deleted_name = o.name FROM old_rows o
          WHERE ch.owner_id = o.owner_id AND ch.contact_id = o.id AND NOT o.is_self;
        RETURN NULL;
      END
      $$;
      CREATE TRIGGER zz_contact_changes_deleted_name AFTER DELETE ON contacts REFERENCING OLD TABLE AS old_rows
        FOR EACH STATEMENT EXECUTE FUNCTION contact_changes_deleted_name();

      CREATE OR REPLACE FUNCTION owner_listing_contacts_truncated() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        UPDATE owner_listing SET version = version + 1, total = 0, change_seq = change_seq + 1, changes_from = change_seq + 1,
          changes_from_at = statement_timestamp();
        DELETE FROM contact_changes;
        RETURN NULL;
      END
      $$;
    `,
  },
];
