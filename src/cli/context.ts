import { loadConfig, type Config } from '../config.js';
import { openStore } from '../store/open-store.js';
import type { Store } from '../store/store.js';
import type { CliIo } from './io.js';

/**
 * Whether a command creates a missing SQLite database, its file and folder: `migrate` and `demo` do. Every other
 * command fails on a missing file with the message `serve` gives, and creates nothing: a mistyped path must not become
 * a new, empty database.
 */
export interface CommandOpening {
  create?: boolean;
}

/**
 * Opens the configured database for a command: an existing one only, unless `create`; without the server's time
 * limits (an import may run long), and a write waits its turn behind another process's (an import), saying so on
 * stderr when the wait is long.
 */
export async function openCommandStore(io: CliIo, config: Config, { create = false }: CommandOpening = {}): Promise<Store> {
  return openStore(config.database, { onLongLockWait: (notice) => io.stderr(`${notice}\n`), mustExist: !create, pooler: config.dbPooler });
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
