/** Why the API refused a key with 403: the missing `contacts:read` scope, the user's plan, or a text this client doesn't know. */
export type PermissionReason = 'scope' | 'plan' | 'unknown';

interface ErrorDetails {
  status?: number;
  serverMessage?: string;
  cause?: unknown;
}

/**
 * Base class of every error the client throws for a failed call. A call cancelled through its own
 * `AbortSignal` rejects with the signal's reason instead, as `fetch` does.
 */
export class ContactsApiError extends Error {
  override name = 'ContactsApiError';
  /** The HTTP status, or undefined when no response arrived (network errors, timeouts). */
  readonly status: number | undefined;
  /** The `error` text of the response body, when there was one. */
  readonly serverMessage: string | undefined;

  constructor(message: string, details: ErrorDetails = {}) {
    super(message, details.cause === undefined ? undefined : { cause: details.cause });
    this.status = details.status;
    this.serverMessage = details.serverMessage;
  }
}

/** 401: the key is missing, malformed, unknown, revoked or expired. Retrying doesn't help. */
export class AuthenticationError extends ContactsApiError {
  override name = 'AuthenticationError';
}

/** 403: the key lacks the `contacts:read` scope, or its user's plan doesn't allow API access. */
export class PermissionError extends ContactsApiError {
  override name = 'PermissionError';
  readonly reason: PermissionReason;

  constructor(message: string, details: ErrorDetails) {
    super(message, details);
    this.reason = permissionReason(details.serverMessage);
  }
}

/** 400: a parameter was refused; the message names it. The admin client also gives it for 413 and 415 (the body's size or type). */
export class BadRequestError extends ContactsApiError {
  override name = 'BadRequestError';
}

/** 429, after the retries ran out or when the server asked to wait longer than the client's longest delay. */
export class RateLimitError extends ContactsApiError {
  override name = 'RateLimitError';
  /** How long the server asked to wait (its `Retry-After`), when it said. */
  readonly retryAfterMs: number | undefined;

  constructor(message: string, details: ErrorDetails & { retryAfterMs: number | undefined }) {
    super(message, details);
    this.retryAfterMs = details.retryAfterMs;
  }
}

/** 5xx, after the retries ran out. */
export class ServerError extends ContactsApiError {
  override name = 'ServerError';
  /** How long the server asked to wait (its `Retry-After`, as a 503 may send), when it said. */
  readonly retryAfterMs: number | undefined;

  constructor(message: string, details: ErrorDetails & { retryAfterMs: number | undefined }) {
    super(message, details);
    this.retryAfterMs = details.retryAfterMs;
  }
}

/** No response: the connection failed or broke, after the retries ran out. `cause` holds fetch's error. */
export class NetworkError extends ContactsApiError {
  override name = 'NetworkError';
}

/** No complete response within the per-request timeout, after the retries ran out. */
export class TimeoutError extends NetworkError {
  override name = 'TimeoutError';
}

/** 410: the sync token is older than the server's retention, or unknown to it. List the contacts again (`mirror` does). */
export class SyncExpiredError extends ContactsApiError {
  override name = 'SyncExpiredError';
}

/**
 * A response the API never gives: another status (for ContactsClient, 404 often means a wrong base URL), or a body
 * that isn't what the call returns.
 */
export class UnexpectedResponseError extends ContactsApiError {
  override name = 'UnexpectedResponseError';
}

/** 404 from the admin API: no user, key or contact with that id (the message names it). */
export class NotFoundError extends ContactsApiError {
  override name = 'NotFoundError';
}

/**
 * 409 from the admin API: another user has the id or the email, the key can no longer be rotated, or a request with
 * the same Idempotency-Key is still running.
 */
export class ConflictError extends ContactsApiError {
  override name = 'ConflictError';
}

/** 422 from the admin API: the Idempotency-Key was used for another request (another body or path) within 24 hours. */
export class IdempotencyKeyReusedError extends ContactsApiError {
  override name = 'IdempotencyKeyReusedError';
}

/** The error classes a client gives to statuses of its own API, beside the ones every client shares. */
export type StatusErrors = Readonly<Partial<Record<number, new (message: string, details: ErrorDetails) => ContactsApiError>>>;

/** The texts the server sends with 403 (spec: `API key lacks contacts:read`; the plan refusal names the plan). */
function permissionReason(serverMessage: string | undefined): PermissionReason {
  if (serverMessage === undefined) return 'unknown';
  if (/\blacks contacts:read\b/i.test(serverMessage)) return 'scope';
  if (/\bplan\b/i.test(serverMessage)) return 'plan';
  return 'unknown';
}

/**
 * The error for a response that wasn't a success: its status's class (the client's own first), carrying the body's
 * `error` text (or the status line when the body had none) and any `Retry-After`.
 */
export function errorForResponse(
  status: number,
  statusText: string,
  serverMessage: string | undefined,
  retryAfterMs: number | undefined,
  statusErrors: StatusErrors = {},
): ContactsApiError {
  const message = `${serverMessage ?? (statusText || 'no error text')} (HTTP ${status})`;
  const details = { status, serverMessage };
  const ownError = statusErrors[status];
  if (ownError !== undefined) return new ownError(message, details);
  if (status === 400) return new BadRequestError(message, details);
  if (status === 401) return new AuthenticationError(message, details);
  if (status === 403) return new PermissionError(message, details);
  if (status === 410) return new SyncExpiredError(message, details);
  if (status === 429) return new RateLimitError(message, { ...details, retryAfterMs });
  if (status >= 500 && status <= 599) return new ServerError(message, { ...details, retryAfterMs });
  return new UnexpectedResponseError(message, details);
}
