import { dialectOf, openStore, type DatabaseTarget } from '../store/open-store.js';
import type { Store } from '../store/store.js';

export type { Store } from '../store/store.js';
export { watchForDetachedStore } from '../store/detached-store-watch.js';

/**
 * Opens a database for administrative work: without the server's time limits (an import may run long), and on SQLite
 * a write waits its turn behind another process's, with `onLongLockWait` told once when the wait is long.
 */
export function openAdministrativeStore(database: DatabaseTarget, onLongLockWait: (notice: string) => void): Promise<Store> {
  return openStore(database, { onLongLockWait });
}

/** The file a SQLite DATABASE_URL names; null for a database server. */
export function databaseFileOf(database: DatabaseTarget): string | null {
  return dialectOf(database).fileOf(database);
}

/** DATABASE_URL as a printed command may repeat it; null when it must not (it may hold a password). */
export function printableDatabaseUrl(database: DatabaseTarget): string | null {
  return dialectOf(database).printableUrl(database);
}
