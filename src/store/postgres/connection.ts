import pg from 'pg';
import { DatabaseBusyError } from '../../domain/errors.js';
import { DEFAULT_POOL } from '../../domain/database-url.js';
import type { StoreOptions } from '../contracts/store-options.js';
import { sessionModeFor } from './pooler.js';
import { type PoolSession, sessionClientClass } from './session-client.js';
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

/**
 * A pool whose queue of statements waiting for a connection is bounded: past it, a statement is refused at once. Its
 * first connection waits for the session mode to be decided (pooler.ts), which its connections are then opened for.
 */
class BoundedPool extends pg.Pool {
  private sessionDecided: Promise<void> | undefined;

  constructor(
    config: pg.PoolConfig,
    private readonly queueLimit: number,
    private readonly decideSession: () => Promise<void>,
  ) {
    super(config);
  }

  private sessionReady(): Promise<void> {
    // A probe that failed (the server is down) is made again by the next connect.
    this.sessionDecided ??= this.decideSession().catch((error: unknown) => {
      this.sessionDecided = undefined;
      throw error;
    });
    return this.sessionDecided;
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
    const explain = (error: Error) => explainMissingDatabase(error, this.options.connectionString!);
    if (callback === undefined) {
      return this.sessionReady()
        .then(() => super.connect())
        .catch((error: Error) => {
          throw explain(error);
        });
    }
    // pool.query() connects through this method with a callback.
    this.sessionReady().then(
      () => super.connect((error, client, done) => callback(error && explain(error), client, done)),
      (error: Error) => callback(explain(error), undefined, () => undefined),
    );
  }
}

/** SQLSTATE invalid_catalog_name: the database DATABASE_URL names is not on the server. */
const NO_SUCH_DATABASE = '3D000';

/**
 * A missing database says what to do, as a missing SQLite file does (connection.ts of sqlite): PostgreSQL's own
 * `database "x" does not exist` names neither the server nor the way out. Other errors are left as they are.
 */
function explainMissingDatabase(error: Error, url: string): Error {
  if ((error as { code?: unknown }).code !== NO_SUCH_DATABASE) return error;
  const { host, pathname } = new URL(url);
  const name = decodeURIComponent(pathname.slice(1));
  // Without a name in the URL (PostgreSQL then takes the user's), its own message names the database.
  if (name === '') return error;
  return new Error(
    `No database "${name}" on ${host || 'the PostgreSQL server'}: create it (\`createdb ${name}\`) and run \`contacts-read-api migrate\`, or set DATABASE_URL`,
    { cause: error },
  );
}

/** A pool that connects lazily to the PostgreSQL database at `url`. */
export function openPool(url: string, options: StoreOptions): pg.Pool {
  const { size, queueLimit } = options.pool ?? DEFAULT_POOL;
  const connection = { connectionString: url, connectionTimeoutMillis: 5_000, types: POOL_TYPES };
  const session: PoolSession = { mode: undefined, statementTimeoutMs: options.statementTimeoutMs };
  const pool = new BoundedPool({ ...connection, max: size, Client: sessionClientClass(session) }, queueLimit, async () => {
    session.mode = await sessionModeFor(options.pooler ?? 'auto', connection);
  });
  // An idle connection that breaks (server restart, network) is dropped by the pool; without a listener
  // the 'error' event would crash the process. The next query simply opens a new connection.
  pool.on('error', () => {});
  return pool;
}
