/** Socket-level failures: the server is down, unreachable or went away. */
const NETWORK_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ECONNABORTED',
  'EPIPE',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ENOTFOUND',
  'EAI_AGAIN',
]);

/**
 * SQLSTATEs that say the server, not the statement, is the problem: shut down, restarting, out of
 * connection slots, or — on a hot standby — a query cancelled because it conflicted with WAL replay.
 */
const SERVER_UNAVAILABLE_CODES = new Set(['57P01', '57P02', '57P03', '53300', '40001']);

/** Errors pg raises itself, without a code, when a connection breaks or cannot be had in time. */
const DRIVER_CONNECTION_MESSAGE =
  /^Connection terminated|timeout exceeded when trying to connect|connection error and is not queryable|Client was closed and is not queryable/;

/**
 * True when `error` means the PostgreSQL server could not answer at all (refused, dropped, shutting
 * down, overloaded, connection class 08…), as opposed to a statement it rejected. Such an error says
 * nothing about the query, so the same read may be retried on another server.
 */
export function isPostgresConnectionError(error: unknown): boolean {
  if (typeof error !== 'object' || error === null) return false;
  // Connecting to a host name with several addresses fails with one error per address.
  if (error instanceof AggregateError && error.errors.some(isPostgresConnectionError)) return true;
  const { code, message } = error as { code?: unknown; message?: unknown };
  if (typeof code === 'string') {
    if (NETWORK_CODES.has(code) || SERVER_UNAVAILABLE_CODES.has(code) || code.startsWith('08')) return true;
  }
  return typeof message === 'string' && DRIVER_CONNECTION_MESSAGE.test(message);
}
