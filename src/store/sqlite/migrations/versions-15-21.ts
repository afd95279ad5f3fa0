import type { Migration } from '../../contracts/migration.js';

/** Deleted contacts' names in the change log. */
export const VERSIONS_15_TO_21: readonly Migration[] = [
  {
    version: 15,
    name: 'deleted contacts keep their names in the change log',
    // A deleted contact's row is gone, and with it the name a reader of the log (MCP's list_changes) shows the
    // deletion with: the delete trigger keeps it beside the change. The insert and update triggers replace the row,
    // so a contact written again no longer carries it. The REST feed and webhooks do not send it.
    sql: `
      ALTER TABLE contact_changes ADD COLUMN deleted_name TEXT;

      DROP TRIGGER contact_changes_delete;
      CREATE TRIGGER contact_changes_delete AFTER DELETE ON contacts WHEN old.is_self = 0 BEGIN
        UPDATE owner_listing SET change_seq = change_seq + 1 WHERE owner_id = old.owner_id;
        INSERT OR REPLACE INTO contact_changes (owner_id, contact_id, seq, changed_at, deleted_name)
          SELECT owner_id, old.id, change_seq, strftime('%Y-%m-%dT%H:%M:%fZ', 'now'), old.name FROM owner_listing
          WHERE owner_id = old.owner_id;
      END;
    `,
  },
];
