import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import { OverloadError, PublicError, publicOutcome, type PublicOutcome } from '../domain/errors.js';
import { ThrottledWarning } from '../throttled-warning.js';

export const REQUEST_TIMEOUT_MESSAGE = 'Request timed out';
/** An overload refuses thousands of requests a second: logging each would add to it. */
export const BUSY_WARNING_INTERVAL_MS = 10_000;
/** One per kind of overload, so a flood of one kind does not hide the other. */
const busyWarnings = new Map<string, ThrottledWarning>();

/**
 * The public outcome of an error met while serving HTTP: the one mapping (publicOutcome), plus what only Fastify
 * raises: its handler timeout (503) and its own 4xx (body too large, bad JSON…), whose messages are safe.
 */
export function httpOutcome(error: unknown): PublicOutcome {
  if (error instanceof PublicError || !(error instanceof Error)) return publicOutcome(error);
  const { code, statusCode, message } = error as FastifyError;
  if (code === 'FST_ERR_HANDLER_TIMEOUT') return { status: 503, message: REQUEST_TIMEOUT_MESSAGE, headers: {} };
  if (typeof statusCode === 'number' && statusCode >= 400 && statusCode < 500) return { status: statusCode, message, headers: {} };
  return publicOutcome(error);
}

/**
 * Answers every failure as `{ error }`. A 5xx is logged: an unexpected one as an error with its cause, a deliberate one
 * (a PublicError, such as 503 while the database is down) as a warning with its internal message and cause.
 */
export function handleError(error: unknown, request: FastifyRequest, reply: FastifyReply): FastifyReply {
  const outcome = httpOutcome(error);
  if (outcome.status >= 500) {
    if (error instanceof OverloadError) {
      if (!busyWarnings.has(error.name)) busyWarnings.set(error.name, new ThrottledWarning(BUSY_WARNING_INTERVAL_MS));
      const refusalsNotLogged = busyWarnings.get(error.name)!.occurred();
      if (refusalsNotLogged !== null) request.log.warn({ refusalsNotLogged }, error.internal);
    } else if (error instanceof PublicError) request.log.warn({ err: error.cause ?? error }, error.internal ?? error.message);
    else request.log.error({ err: error }, 'request failed');
  }
  return reply.code(outcome.status).headers(outcome.headers).send({ error: outcome.message });
}
