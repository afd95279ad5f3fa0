import { connect } from 'node:net';
import pg from 'pg';
import type { SessionMode } from './pooler.js';

/** What the connections of one pool share: the mode, decided before the first of them opens, and the statement timeout. */
export interface PoolSession {
  mode: SessionMode | undefined;
  readonly statementTimeoutMs: number | undefined;
}

/**
 * A statement past its timeout whose cancel went nowhere (a pooler drops the cancel of a client still waiting for a
 * server connection) is given up this much later: its connection is closed, which the pooler answers by closing the
 * server connection the statement may have reached since.
 */
const CANCEL_GRACE_MS = 1_000;
/** The protocol's CancelRequest code (1234 << 16 | 5678). */
const CANCEL_REQUEST_CODE = 80877102;

type Callback = (error: Error | undefined, result: unknown) => void;

/**
 * A pool's connection. Direct, it is today's: the time zone and the statement timeout are startup settings of the
 * session, and named statements are prepared once per connection. Pooled, nothing is left on the server connection a
 * transaction borrowed: statements go unnamed, a transaction sets what it needs with SET LOCAL, and a statement
 * outside a transaction is held to the timeout from here, by a cancel request.
 */
export class SessionClient extends pg.Client {
  constructor(
    config: pg.ClientConfig,
    private readonly session: PoolSession,
  ) {
    super(
      session.mode === 'direct'
        ? // Timestamps come back in UTC (parseTimestamptz converts any zone, but this is its fast path). The timeout is
          // server-side, so a runaway statement is cancelled by PostgreSQL and its connection stays usable.
          { ...config, options: '-c TimeZone=UTC', statement_timeout: session.statementTimeoutMs }
        : config,
    );
  }

  /** The statement that opens a transaction: `begin`, and when pooled the settings it needs, in the same round trip. */
  beginStatement(begin: string): string {
    if (this.session.mode === 'direct') return begin;
    const { statementTimeoutMs } = this.session;
    return `${begin}; SET LOCAL TimeZone = 'UTC'${statementTimeoutMs === undefined ? '' : `; SET LOCAL statement_timeout = ${statementTimeoutMs}`}`;
  }

  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- pg's query() has a dozen overloads; every shape passes through
  override query(config: any, values?: any, callback?: any): any {
    if (this.session.mode === 'direct' || typeof config?.submit === 'function') return super.query(config, values, callback);
    const unnamed = typeof config === 'object' && config !== null ? { ...config, name: undefined } : config;
    const status = this.getTransactionStatus();
    const { statementTimeoutMs } = this.session;
    if (statementTimeoutMs === undefined || status === 'T' || status === 'E') return super.query(unnamed, values, callback);
    // pool.query() passes a callback, third or (without values) second.
    const parameters = typeof values === 'function' ? undefined : values;
    const done: Callback | undefined = typeof values === 'function' ? values : callback;
    const disarm = this.deadline(statementTimeoutMs);
    if (done !== undefined) {
      return super.query(unnamed, parameters, (error: Error | undefined, result: unknown) => {
        disarm();
        done(error, result);
      });
    }
    const result = super.query(unnamed, parameters);
    result.then(disarm, disarm);
    return result;
  }

  /** Cancels the running statement after `ms`, and closes the connection if that did not end it; returns the disarm. */
  private deadline(ms: number): () => void {
    let abandon: NodeJS.Timeout | undefined;
    const cancel = setTimeout(() => {
      this.sendCancel();
      abandon = setTimeout(() => void this.end().catch(() => undefined), CANCEL_GRACE_MS);
    }, ms);
    return () => {
      clearTimeout(cancel);
      clearTimeout(abandon);
    };
  }

  /** A CancelRequest with this connection's key, on a connection of its own, as libpq's PQcancel sends it. */
  private sendCancel(): void {
    // pg keeps the BackendKeyData on the client without declaring it in its types.
    const { processID, secretKey } = this as unknown as { processID: number; secretKey: number };
    const request = Buffer.alloc(16);
    request.writeInt32BE(16, 0);
    request.writeInt32BE(CANCEL_REQUEST_CODE, 4);
    request.writeInt32BE(processID, 8);
    request.writeInt32BE(secretKey, 12);
    const socket = this.host.startsWith('/') ? connect(`${this.host}/.s.PGSQL.${this.port}`) : connect(this.port, this.host);
    // The receiver closes the connection once it has passed the cancel on; closing first would withdraw it from a
    // pooler (PgBouncer drops the cancel of a client gone). One that cannot be delivered is what the grace is for.
    socket.setTimeout(CANCEL_GRACE_MS, () => socket.destroy());
    socket.on('error', () => socket.destroy());
    socket.write(request);
  }
}

/** The Client class of one pool: pg-pool constructs each connection with the pool's config alone. */
export function sessionClientClass(session: PoolSession): new () => pg.Client {
  return class extends SessionClient {
    constructor(config: pg.ClientConfig = {}) {
      super(config, session);
    }
  };
}

/** The statement that opens a transaction on `client` with `begin` (BEGIN, maybe with a mode). */
export function beginStatement(client: pg.ClientBase, begin: string): string {
  return client instanceof SessionClient ? client.beginStatement(begin) : begin;
}
