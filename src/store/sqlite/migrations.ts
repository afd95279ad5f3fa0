import type { Migration } from '../contracts/migration.js';
import { VERSIONS_1_TO_7 } from './migrations/versions-1-7.js';
import { VERSIONS_8_TO_14 } from './migrations/versions-8-14.js';
import { VERSIONS_15_TO_21 } from './migrations/versions-15-21.js';

/** SQLite's schema, every migration in version order. Frozen: a change to the schema is a new migration. */
export const SQLITE_MIGRATIONS: readonly Migration[] = [...VERSIONS_1_TO_7, ...VERSIONS_8_TO_14, ...VERSIONS_15_TO_21];
