/** What every failure the service does not explain shows: its cause goes to the logs only. */
export const INTERNAL_ERROR_MESSAGE = 'Internal server error';

/**
 * A failure the caller may be told about: `message` is public (safe to show to anyone), `status` says what kind of
 * failure it is (HTTP's codes, which the CLI and MCP read too), `headers` go with an HTTP answer, and `internal`
 * (with `cause`) is what an operator needs, for the logs alone.
 */
export class PublicError extends Error {
  override name = 'PublicError';
  readonly headers: Readonly<Record<string, string>>;
  readonly internal: string | undefined;

  constructor(
    readonly status: number,
    message: string,
    options: { headers?: Record<string, string>; internal?: string; cause?: unknown } = {},
  ) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.headers = options.headers ?? {};
    this.internal = options.internal;
  }
}

/** The caller's input is wrong; the message says what and is safe to show. Nothing was changed. */
export class InputError extends PublicError {
  override name = 'InputError';
  constructor(message: string) {
    super(400, message);
  }
}

/** A referenced record (user, key, contact) does not exist for the caller. */
export class NotFoundError extends PublicError {
  override name = 'NotFoundError';
  constructor(message: string) {
    super(404, message);
  }
}

/** The request conflicts with what exists: an id or email another user holds, a key that can no longer be rotated. */
export class ConflictError extends PublicError {
  override name = 'ConflictError';
  constructor(message: string) {
    super(409, message);
  }
}

export const DATABASE_BUSY_MESSAGE = 'Too many requests are waiting for the database; retry in a second';
export const SERVER_BUSY_MESSAGE = 'Too many requests in progress; retry in a second';

/** A refusal because this process is saturated: the client retries in a second; a flood of them is logged sparingly. */
export class OverloadError extends PublicError {
  override name = 'OverloadError';
  constructor(message: string, internal: string) {
    super(503, message, { headers: { 'retry-after': '1' }, internal });
  }
}

/** The database is saturated: this process already has its whole queue of statements waiting for a connection. */
export class DatabaseBusyError extends OverloadError {
  override name = 'DatabaseBusyError';
  constructor(queueLimit: number) {
    super(DATABASE_BUSY_MESSAGE, `refused: ${queueLimit} statements already waiting for a database connection`);
  }
}

/** This process already has MAX_INFLIGHT_REQUESTS requests begun and not finished. */
export class ServerBusyError extends OverloadError {
  override name = 'ServerBusyError';
  constructor(maxInflight: number) {
    super(SERVER_BUSY_MESSAGE, `refused: ${maxInflight} requests already in flight in this process`);
  }
}

/** What the caller is told of a failure, on any interface (HTTP, MCP, CLI). */
export interface PublicOutcome {
  status: number;
  message: string;
  headers: Readonly<Record<string, string>>;
}

/** The one mapping from an error to what the caller sees: a PublicError as it says, anything else a generic 500. */
export function publicOutcome(error: unknown): PublicOutcome {
  if (error instanceof PublicError) return { status: error.status, message: error.message, headers: error.headers };
  return { status: 500, message: INTERNAL_ERROR_MESSAGE, headers: {} };
}
