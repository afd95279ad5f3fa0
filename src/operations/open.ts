import { dialectOf, openStore, type DatabaseTarget } from '../store/open-store.js';
import type { Store } from '../store/store.js';

export type { Store } from '../store/store.js';
export { watchForDetachedStore } from '../store/detached-store-watch.js';

/** How administrative work opens its database. */
export interface AdministrativeOpening {
  /** Told once, with a line to show, when a write waits long for another process's (SQLite). */
  onLongLockWait: (notice: string) => void;
  /**
   * Create a missing SQLite database, its file and folder: `migrate` and `demo` only. Otherwise a missing file fails
   * with the message `serve` gives, and nothing is created: a mistyped path must not become a new, empty database.
   */
  create?: boolean;
}

/**
 * Opens a database for administrative work: without the server's time limits (an import may run long), and on SQLite
 * a write waits its turn behind another process's. Only an existing database is opened unless `create`.
 */
export function openAdministrativeStore(
  database: DatabaseTarget,
  { onLongLockWait, create = false }: AdministrativeOpening,
): Promise<Store> {
  return openStore(database, { onLongLockWait, mustExist: !create });
}

/** DATABASE_URL as a printed command may repeat it; null when it must not (it may hold a password). */
export function printableDatabaseUrl(database: DatabaseTarget): string | null {
  return dialectOf(database).printableUrl(database);
}
