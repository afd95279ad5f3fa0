import { loadConfig, type Config } from '../config.js';
import { openAdministrativeStore, type Store } from '../operations/open.js';
import type { CliIo } from './io.js';

/**
 * Opens the configured database for a command: without the server's time limits, and a write waits its turn
 * behind another process's (an import), saying so on stderr when the wait is long.
 */
export async function openCommandStore(io: CliIo, config: Config): Promise<Store> {
  return openAdministrativeStore(config.database, (notice) => io.stderr(`${notice}\n`));
}

/** Runs `action` with a migrated store for the configured database, closing it afterwards. */
export async function withStore<T>(io: CliIo, action: (store: Store, config: Config) => Promise<T>): Promise<T> {
  const config = loadConfig(io.env);
  const store = await openCommandStore(io, config);
  try {
    await store.migrate();
    return await action(store, config);
  } finally {
    await store.close();
  }
}
