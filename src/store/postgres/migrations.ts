import type { Migration } from '../contracts/migration.js';
import { VERSIONS_1_TO_3 } from './migrations/versions-1-3.js';
import { VERSIONS_4_TO_7 } from './migrations/versions-4-7.js';
import { VERSIONS_8_TO_14 } from './migrations/versions-8-14.js';
import { VERSIONS_15_TO_21 } from './migrations/versions-15-21.js';

/**
 * The PostgreSQL schema: the same tables, constraints and indexes as SQLITE_MIGRATIONS, in native types
 * (uuid ids, timestamptz, boolean is_self, text[] for tags and scopes, jsonb objects), every migration in version
 * order. Frozen: a change to the schema is a new migration.
 */
export const POSTGRES_MIGRATIONS: readonly Migration[] = [
  ...VERSIONS_1_TO_3,
  ...VERSIONS_4_TO_7,
  ...VERSIONS_8_TO_14,
  ...VERSIONS_15_TO_21,
];
