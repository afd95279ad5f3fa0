import { loadConfig, type Config } from '../config.js';
import { openAdministrativeStore, type Store } from '../operations/open.js';
import type { CliIo } from './io.js';

/** Whether a command creates a missing database: `migrate` and `demo` do, every other command refuses it. */
export interface CommandOpening {
  create?: boolean;
}

/**
 * Opens the configured database for a command: an existing one only, unless `create`; without the server's time
 * limits, and a write waits its turn behind another process's (an import), saying so on stderr when the wait is long.
 */
export async function openCommandStore(io: CliIo, config: Config, { create }: CommandOpening = {}): Promise<Store> {
  return openAdministrativeStore(config.database, { create, onLongLockWait: (notice) => io.stderr(`${notice}\n`) });
}

/** Runs `action` with a migrated store for the configured database (an existing one, unless `create`), closing it afterwards. */
export async function withStore<T>(
  io: CliIo,
  action: (store: Store, config: Config) => Promise<T>,
  opening: CommandOpening = {},
): Promise<T> {
  const config = loadConfig(io.env);
  const store = await openCommandStore(io, config, opening);
  try {
    await store.migrate();
    return await action(store, config);
  } finally {
    await store.close();
  }
}
