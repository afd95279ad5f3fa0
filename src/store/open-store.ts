import type { DatabaseTarget, Dialect, TargetOf } from './contracts/dialect.js';
import { POSTGRES_DIALECT } from './postgres/dialect.js';
import { SQLITE_DIALECT } from './sqlite/dialect.js';
import type { StoreOptions } from './contracts/store-options.js';
import type { Store } from './store.js';

export type { DatabaseTarget } from './contracts/dialect.js';

const DIALECTS: { [Name in DatabaseTarget['kind']]: Dialect<TargetOf<Name>> } = { sqlite: SQLITE_DIALECT, postgres: POSTGRES_DIALECT };

/** The dialect of the database `target` names, to be asked about that target alone. */
export function dialectOf(target: DatabaseTarget): Dialect {
  return DIALECTS[target.kind];
}

/** Opens the store the target names; each driver is loaded only when used. */
export async function openStore(target: DatabaseTarget, options: StoreOptions = {}): Promise<Store> {
  switch (target.kind) {
    case 'sqlite': {
      const { openSqliteStore } = await import('./sqlite/sqlite-store.js');
      return openSqliteStore(target.path, options);
    }
    case 'postgres': {
      const { openPostgresStore } = await import('./postgres/postgres-store.js');
      return openPostgresStore(target.url, options);
    }
  }
}

/** DATABASE_URL as a printed command may repeat it; null when it must not (it may hold a password). */
export function printableDatabaseUrl(target: DatabaseTarget): string | null {
  return dialectOf(target).printableUrl(target);
}
