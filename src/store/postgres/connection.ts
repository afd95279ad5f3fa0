import pg from 'pg';
import type { StoreOptions } from '../store.js';
import { parseTimestamptz } from './timestamps.js';

const TIMESTAMPTZ_OID = 1184;

/** Per-pool type parsers (the global pg.types stay untouched): only timestamptz text differs from pg's defaults. */
const POOL_TYPES: pg.CustomTypesConfig = {
  getTypeParser(oid, format) {
    if (oid === TIMESTAMPTZ_OID && format !== 'binary') return parseTimestamptz;
    return pg.types.getTypeParser(oid, format);
  },
};

/** A pool that connects lazily to the PostgreSQL database at `url`. */
export function openPool(url: string, options: StoreOptions): pg.Pool {
  const pool = new pg.Pool({
    connectionString: url,
    max: 10,
    connectionTimeoutMillis: 5_000,
    // Timestamps come back in UTC (parseTimestamptz would convert any other zone, but this keeps the fast path).
    options: '-c TimeZone=UTC',
    // Server-side, so a runaway query is cancelled by PostgreSQL and its connection stays usable.
    statement_timeout: options.statementTimeoutMs,
    types: POOL_TYPES,
  });
  // An idle connection that breaks (server restart, network) is dropped by the pool; without a listener
  // the 'error' event would crash the process. The next query simply opens a new connection.
  pool.on('error', () => {});
  return pool;
}
