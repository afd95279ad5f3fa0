import { describe, expect, it } from 'vitest';
import { AuthError, WWW_AUTHENTICATE } from '../../src/auth/authenticator.js';
import { ConfigError } from '../../src/config.js';
import { ConflictError, INTERNAL_ERROR_MESSAGE, InputError, NotFoundError, PublicError, publicOutcome } from '../../src/domain/errors.js';
import { httpOutcome, REQUEST_TIMEOUT_MESSAGE } from '../../src/web/errors.js';

const fastifyError = (code: string, statusCode: number, message: string) => Object.assign(new Error(message), { code, statusCode });

describe('the one mapping from an error to what the caller sees (HTTP, MCP and CLI alike)', () => {
  it.each([
    ['400: bad input keeps its message', new InputError('"limit" must be an integer'), 400, '"limit" must be an integer', {}],
    [
      '404: a missing record keeps its message (it used to become a 500)',
      new NotFoundError('No user with id x'),
      404,
      'No user with id x',
      {},
    ],
    [
      '409: a conflict (a taken id or email) keeps its message',
      new ConflictError('A user with email a@example.com already exists'),
      409,
      'A user with email a@example.com already exists',
      {},
    ],
    [
      '401: any key problem, with WWW-Authenticate',
      new AuthError(401, 'Invalid or inactive API key', 'revoked'),
      401,
      'Invalid or inactive API key',
      { 'www-authenticate': WWW_AUTHENTICATE },
    ],
    [
      '403: scope or plan, without WWW-Authenticate',
      new AuthError(403, 'API access requires a Pro plan', 'plan'),
      403,
      'API access requires a Pro plan',
      {},
    ],
    [
      '405: with its headers',
      new PublicError(405, 'Method PUT is not allowed', { headers: { allow: 'GET' } }),
      405,
      'Method PUT is not allowed',
      { allow: 'GET' },
    ],
    [
      '429: with Retry-After',
      new PublicError(429, 'Rate limit exceeded', { headers: { 'retry-after': '7' } }),
      429,
      'Rate limit exceeded',
      { 'retry-after': '7' },
    ],
    [
      '503: a deliberate outage shows its public message only',
      new PublicError(503, 'Database unavailable', { internal: 'ping timed out at 10.0.0.5', cause: new Error('secret') }),
      503,
      'Database unavailable',
      {},
    ],
  ])('%s', (_rule, error, status, message, headers) => {
    expect(publicOutcome(error)).toEqual({ status, message, headers });
    expect(httpOutcome(error)).toEqual({ status, message, headers });
  });

  it('500: anything else is a generic message that carries nothing of the error', () => {
    for (const error of [
      new Error('connect ECONNREFUSED 10.0.0.5:5432'),
      new TypeError("Cannot read properties of undefined (reading 'x')"),
      'a string',
      null,
      new ConfigError('DATABASE_URL must be …'),
    ]) {
      expect(publicOutcome(error)).toEqual({ status: 500, message: INTERNAL_ERROR_MESSAGE, headers: {} });
      expect(httpOutcome(error)).toEqual({ status: 500, message: INTERNAL_ERROR_MESSAGE, headers: {} });
    }
  });

  it('the internal message of a PublicError never reaches the caller', () => {
    const outcome = publicOutcome(
      new PublicError(503, 'Database unavailable', { internal: 'password authentication failed for user "app"' }),
    );
    expect(JSON.stringify(outcome)).not.toContain('password');
  });

  describe('what only HTTP meets (Fastify)', () => {
    it("503 for the handler timeout, with the service's own message", () => {
      expect(httpOutcome(fastifyError('FST_ERR_HANDLER_TIMEOUT', 503, 'handler timed out after 10000ms'))).toEqual({
        status: 503,
        message: REQUEST_TIMEOUT_MESSAGE,
        headers: {},
      });
    });

    it("Fastify's own 4xx keep their message (body too large, bad JSON)", () => {
      expect(httpOutcome(fastifyError('FST_ERR_CTP_BODY_TOO_LARGE', 413, 'Request body is too large'))).toEqual({
        status: 413,
        message: 'Request body is too large',
        headers: {},
      });
    });

    it("Fastify's 5xx stay generic", () => {
      expect(httpOutcome(fastifyError('FST_ERR_SOMETHING', 500, 'internal detail'))).toEqual({
        status: 500,
        message: INTERNAL_ERROR_MESSAGE,
        headers: {},
      });
    });
  });
});
