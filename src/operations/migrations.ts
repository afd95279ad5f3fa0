import type { DatabaseTarget, PoolerSetting } from '../domain/database-url.js';
import { openStore } from '../store/open-store.js';

/**
 * Applies the pending migrations of an existing database on a connection of its own, closed afterwards; returns the
 * versions applied. What `serve`'s primary does once before its workers start.
 */
export async function migrateDatabase(target: DatabaseTarget, pooler: PoolerSetting): Promise<number[]> {
  const store = await openStore(target, { mustExist: true, pooler });
  try {
    return await store.migrate();
  } finally {
    await store.close();
  }
}
