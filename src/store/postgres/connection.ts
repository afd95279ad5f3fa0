import pg from 'pg';
import { DatabaseBusyError } from '../../domain/errors.js';
import { DEFAULT_POOL, type StoreOptions } from '../store.js';
import { parseTimestamptz } from './timestamps.js';

const TIMESTAMPTZ_OID = 1184;

/** Per-pool type parsers (the global pg.types stay untouched): only timestamptz text differs from pg's defaults. */
const POOL_TYPES: pg.CustomTypesConfig = {
  getTypeParser(oid, format) {
    if (oid === TIMESTAMPTZ_OID && format !== 'binary') return parseTimestamptz;
    return pg.types.getTypeParser(oid, format);
  },
};

type ConnectCallback = (error: Error | undefined, client: pg.PoolClient | undefined, done: (release?: unknown) => void) => void;

/** A pool whose queue of statements waiting for a connection is bounded: past it, a statement is refused at once. */
class BoundedPool extends pg.Pool {
  constructor(
    config: pg.PoolConfig,
    private readonly queueLimit: number,
  ) {
    super(config);
  }

  override connect(): Promise<pg.PoolClient>;
  override connect(callback: ConnectCallback): void;
  override connect(callback?: ConnectCallback): Promise<pg.PoolClient> | void {
    if (this.waitingCount >= this.queueLimit) {
      const refusal = new DatabaseBusyError(this.queueLimit);
      if (callback === undefined) return Promise.reject(refusal);
      process.nextTick(() => callback(refusal, undefined, () => undefined));
      return;
    }
    // pool.query() connects through this method with a callback.
    return callback === undefined ? super.connect() : super.connect(callback as Parameters<pg.Pool['connect']>[0]);
  }
}

/** A pool that connects lazily to the PostgreSQL database at `url`. */
export function openPool(url: string, options: StoreOptions): pg.Pool {
  const { size, queueLimit } = options.pool ?? DEFAULT_POOL;
  const pool = new BoundedPool(
    {
      connectionString: url,
      max: size,
      connectionTimeoutMillis: 5_000,
      // Timestamps come back in UTC (parseTimestamptz would convert any other zone, but this keeps the fast path).
      options: '-c TimeZone=UTC',
      // Server-side, so a runaway query is cancelled by PostgreSQL and its connection stays usable.
      statement_timeout: options.statementTimeoutMs,
      types: POOL_TYPES,
    },
    queueLimit,
  );
  // An idle connection that breaks (server restart, network) is dropped by the pool; without a listener
  // the 'error' event would crash the process. The next query simply opens a new connection.
  pool.on('error', () => {});
  return pool;
}
