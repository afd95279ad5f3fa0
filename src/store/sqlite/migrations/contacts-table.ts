import { CONTACT_COLUMNS_V1, CONTACT_FIELDS_V1 } from '../../contact-fields-v1.js';
import { contactJsonExpression, namesAndValues } from '../../contact-row.js';

/**
 * The contacts table as migration 1 created it, under `name`, with `generated` column definitions after the
 * others (migration 5). Frozen like the migrations that use it: a change to it is a new migration.
 */
export const contactsTableSql = (name: string, generated = '') => `CREATE TABLE ${name} (
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
        updated_at     TEXT NOT NULL,${generated}
        UNIQUE (owner_id, id),
        -- A contact can only be merged into a contact of the same owner.
        FOREIGN KEY (owner_id, merged_into) REFERENCES ${name} (owner_id, id),
        CHECK (merged_into IS NULL OR merged_into <> id)
      );`;

/** The contacts table's indexes (migration 1; migration 5 recreates them on the rebuilt table). */
export const CONTACTS_INDEXES = `CREATE INDEX contacts_listable ON contacts (owner_id, created_at, id) WHERE merged_into IS NULL AND is_self = 0;
      CREATE UNIQUE INDEX contacts_one_self_row ON contacts (owner_id) WHERE is_self = 1;
      CREATE INDEX contacts_merged_into ON contacts (owner_id, merged_into) WHERE merged_into IS NOT NULL;`;

/** The triggers that keep owner_listing in step with contacts (migration 3; migration 5 recreates them). */
export const OWNER_LISTING_CONTACT_TRIGGERS = `CREATE TRIGGER owner_listing_insert AFTER INSERT ON contacts BEGIN
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
      END;`;

/** A contact's JSON as the API shows it, from its columns (migration 5): tags and objects are kept as JSON text. */
export const CONTACT_API_JSON = contactJsonExpression(
  CONTACT_FIELDS_V1,
  (pairs) => `json_object(${namesAndValues(pairs)})`,
  ({ name, kind }) => (kind === 'tags' || kind === 'object' ? `json(${name})` : name),
);
/** The contacts table's stored columns (migration 1). */
export const CONTACTS_STORED_COLUMNS = ['owner_id', 'is_self', 'merged_into', ...CONTACT_COLUMNS_V1].join(', ');

/**
 * A row-level trigger that records the contact's change for the owner of each side, at the owner's next change_seq
 * (migration 7). An update records for the old owner too when the row moved to another.
 */
export function recordChangeTrigger(name: string, event: string, when: string, sides: readonly ('old' | 'new')[]): string {
  const record = (
    side: 'old' | 'new',
    moved: string,
  ) => `UPDATE owner_listing SET change_seq = change_seq + 1 WHERE owner_id = ${side}.owner_id${moved};
        INSERT OR REPLACE INTO contact_changes (owner_id, contact_id, seq, changed_at)
          SELECT owner_id, ${side}.id, change_seq, strftime('%Y-%m-%dT%H:%M:%fZ', 'now') FROM owner_listing
          WHERE owner_id = ${side}.owner_id${moved};`;
  const moved = sides.length === 2 ? ' AND old.owner_id <> new.owner_id' : '';
  const body = sides.map((side) => record(side, side === 'old' ? moved : '')).join('\n        ');
  return `CREATE TRIGGER ${name} ${event} ON contacts WHEN ${when} BEGIN
        ${body}
      END;`;
}
