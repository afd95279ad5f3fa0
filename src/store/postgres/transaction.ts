import { AsyncLocalStorage } from 'node:async_hooks';
import type pg from 'pg';
import { beginStatement } from './session-client.js';

/** The transaction a bulk load runs in: store calls made inside it join it instead of opening their own. */
const ambientTransaction = new AsyncLocalStorage<pg.PoolClient>();

/** Runs `work` with every store call inside it joining `client`'s transaction. */
export function joiningTransaction<T>(client: pg.PoolClient, work: () => Promise<T>): Promise<T> {
  return ambientTransaction.run(client, work);
}

/** Where a query goes: the bulk load's transaction when inside one, else the pool. */
export function queryable(pool: pg.Pool): pg.Pool | pg.PoolClient {
  return ambientTransaction.getStore() ?? pool;
}

/**
 * Runs `work` in BEGIN … COMMIT (`begin` may set the mode) on one connection, rolling back when anything throws. Through
 * a transaction pooler the transaction's settings travel with its BEGIN (session-client.ts).
 */
export async function inTransaction<T>(pool: pg.Pool, work: (client: pg.PoolClient) => Promise<T>, begin = 'BEGIN'): Promise<T> {
  const joined = ambientTransaction.getStore();
  if (joined) return work(joined);
  const client = await pool.connect();
  let broken: Error | undefined;
  try {
    await client.query(beginStatement(client, begin));
    const result = await work(client);
    await client.query('COMMIT');
    return result;
  } catch (error) {
    try {
      await client.query('ROLLBACK');
    } catch (rollbackError) {
      broken = rollbackError instanceof Error ? rollbackError : new Error(String(rollbackError));
    }
    throw error;
  } finally {
    // A connection whose rollback failed is in an unknown state: the pool destroys it instead of reusing it.
    client.release(broken);
  }
}
