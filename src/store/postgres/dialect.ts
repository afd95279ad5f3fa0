import { CONTACT_FIELDS, type ContactFieldKind } from '../../domain/contact.js';
import type { ContactColumn } from '../columns.js';
import type { Dialect, TargetOf } from '../contracts/dialect.js';
import { linkedinUrlKeySql } from '../import-match.js';
import { isPostgresConnectionError } from './connection-error.js';

/** Key of the transaction-level advisory lock that serializes concurrent migrations. */
const MIGRATION_LOCK_KEY = 7_283_610_041;

export const POSTGRES_DIALECT: Dialect<TargetOf<'postgres'>> = {
  name: 'postgres',

  printableUrl: () => null,

  isFalse: (column) => `NOT ${column}`,
  emailKey: (column) => `lower(${column} COLLATE "C")`,
  linkedinUrlKey: (column) => linkedinUrlKeySql(`lower(${column} COLLATE "C")`, (text, sought) => `strpos(${text}, ${sought})`),
  countAsNumber: (count) => `${count}::int`,

  migrationsTableSql: `CREATE TABLE IF NOT EXISTS schema_migrations (
      version integer PRIMARY KEY, name text NOT NULL, applied_at timestamptz NOT NULL)`,
  async acquireMigrationLock(session) {
    await session.exec(`SELECT pg_advisory_xact_lock(${MIGRATION_LOCK_KEY})`);
    // A migration may rightly run longer than the statement timeout meant for requests.
    await session.exec('SET LOCAL statement_timeout = 0');
  },

  oneWriterAtATime: false,
  isUnreachable: isPostgresConnectionError,
};

const TYPES: Record<ContactFieldKind, string> = {
  id: 'uuid',
  text: 'text',
  tags: 'text[]',
  object: 'json',
  timestamp: 'timestamptz',
};

const TYPE_OF_COLUMN = new Map(CONTACT_FIELDS.map((field) => [field.name, TYPES[field.kind]]));

/** How PostgreSQL stores a contact column. */
export function postgresTypeOf(column: ContactColumn): string {
  return TYPE_OF_COLUMN.get(column)!;
}
