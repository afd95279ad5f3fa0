import { loadConfig, type Config } from '../config.js';
import { NotFoundError } from '../domain/errors.js';
import { openStore } from '../store/open-store.js';
import type { Store, User } from '../store/store.js';
import type { CliIo } from './io.js';

/** Runs `action` with a migrated store for the configured database, closing it afterwards. */
export async function withStore<T>(io: CliIo, action: (store: Store, config: Config) => Promise<T>): Promise<T> {
  const config = loadConfig(io.env);
  const store = await openStore(config.database);
  try {
    await store.migrate();
    return await action(store, config);
  } finally {
    await store.close();
  }
}

export async function requireUser(store: Store, idOrEmail: string): Promise<User> {
  const user = await store.users.find(idOrEmail);
  if (!user) throw new NotFoundError(`No user with email or id "${idOrEmail}"`);
  return user;
}
