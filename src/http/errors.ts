import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import { AuthError } from '../auth/authenticator.js';
import { InputError } from '../domain/errors.js';

export const INTERNAL_ERROR_MESSAGE = 'Internal server error';
export const REQUEST_TIMEOUT_MESSAGE = 'Request timed out';
export const WWW_AUTHENTICATE = 'Bearer realm="contacts-api"';

/** An error with a status and a message that is safe to send. */
export class HttpError extends Error {
  override name = 'HttpError';
  constructor(
    readonly statusCode: number,
    message: string,
    readonly headers: Record<string, string> = {},
  ) {
    super(message);
  }
}

/** Maps every thrown error to `{ error }`: known 4xx keep their message, anything else is a generic 500. */
export function toHttpError(error: unknown): HttpError {
  if (error instanceof HttpError) return error;
  if (error instanceof AuthError) {
    return new HttpError(error.status, error.message, error.status === 401 ? { 'www-authenticate': WWW_AUTHENTICATE } : {});
  }
  if (error instanceof InputError) return new HttpError(400, error.message);
  if ((error as FastifyError).code === 'FST_ERR_HANDLER_TIMEOUT') return new HttpError(503, REQUEST_TIMEOUT_MESSAGE);
  const status = (error as FastifyError).statusCode;
  if (typeof status === 'number' && status >= 400 && status < 500) {
    return new HttpError(status, (error as FastifyError).message);
  }
  return new HttpError(500, INTERNAL_ERROR_MESSAGE);
}

export function handleError(error: unknown, request: FastifyRequest, reply: FastifyReply): FastifyReply {
  const httpError = toHttpError(error);
  // A deliberate HttpError (503 not ready) was logged where it was raised, with its cause.
  if (httpError.statusCode >= 500 && !(error instanceof HttpError)) request.log.error({ err: error }, 'request failed');
  return reply.code(httpError.statusCode).headers(httpError.headers).send({ error: httpError.message });
}
