import type { Dialect, TargetOf } from '../contracts/dialect.js';
import { linkedinUrlKeySql } from '../import-match.js';

export const SQLITE_DIALECT: Dialect<TargetOf<'sqlite'>> = {
  name: 'sqlite',

  printableUrl: (target) => `file:${target.path}`,

  isFalse: (column) => `${column} = 0`,
  emailKey: (column) => `lower(${column})`,
  linkedinUrlKey: (column) => linkedinUrlKeySql(`lower(${column})`, (text, sought) => `instr(${text}, ${sought})`),
  countAsNumber: (count) => count,

  migrationsTableSql: `CREATE TABLE IF NOT EXISTS schema_migrations (
      version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at TEXT NOT NULL)`,
  // The migrations' transaction is an immediate one (sqlite-store.ts): it holds the database's write lock already.
  acquireMigrationLock: async () => {},

  oneWriterAtATime: true,

  // A file has no server to lose: every error is about the statement or the file itself.
  isUnreachable: () => false,
};
