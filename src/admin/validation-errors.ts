import type { FastifySchemaValidationError } from 'fastify';
import { InputError } from '../domain/errors.js';

const FORMAT_NAMES: Record<string, string> = {
  uuid: 'a UUID',
  'date-time': 'a date and time in RFC 3339 form, like 2026-05-01T09:30:00Z',
};

const TYPE_NAMES: Record<string, string> = {
  string: 'a string',
  integer: 'an integer',
  number: 'a number',
  boolean: 'true or false',
  object: 'an object',
  array: 'an array',
  null: 'null',
};

/** Where a request's data came from, as a message says it when the field is the whole of it. */
const WHOLE: Record<string, string> = {
  body: 'The body',
  querystring: 'The query',
  params: 'The path',
  headers: 'The headers',
};

/**
 * Fastify's `schemaErrorFormatter` for the admin API: the first problem of a request that fails its schema, as an
 * InputError (400) naming the field, such as `plan must be one of: free, pro` or `unknown field "nmae"`.
 */
export function validationError(errors: FastifySchemaValidationError[], dataVar: string): Error {
  const [error] = errors;
  if (error === undefined) return new InputError(`${WHOLE[dataVar] ?? dataVar} is invalid`);
  const field = error.instancePath.split('/').slice(1).join('.');
  const params = error.params as Record<string, unknown>;
  const named = (name: string) => (field === '' ? name : `${field}.${name}`);
  switch (error.keyword) {
    case 'required':
      return new InputError(`${named(String(params.missingProperty))} is required`);
    case 'additionalProperties':
      return new InputError(`unknown field "${named(String(params.additionalProperty))}"`);
    default: {
      const subject = field === '' ? (WHOLE[dataVar] ?? dataVar) : field;
      return new InputError(`${subject} ${describe(error.keyword, params, error.message ?? 'is invalid')}`);
    }
  }
}

function describe(keyword: string, params: Record<string, unknown>, message: string): string {
  if (keyword === 'enum') return `must be one of: ${(params.allowedValues as unknown[]).join(', ')}`;
  if (keyword === 'type')
    return `must be ${String(params.type)
      .split(',')
      .map((type) => TYPE_NAMES[type] ?? type)
      .join(' or ')}`;
  if (keyword === 'format') return `must be ${FORMAT_NAMES[String(params.format)] ?? `in the ${String(params.format)} format`}`;
  return message;
}
