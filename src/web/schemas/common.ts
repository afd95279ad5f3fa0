import Type, { type Static } from 'typebox';

export const ErrorSchema = Type.Object(
  { error: Type.String({ description: 'What went wrong, in words safe to show.' }) },
  { additionalProperties: false, description: 'Every error body has this form.' },
);

export type ErrorBody = Static<typeof ErrorSchema>;

/**
 * A response header as a route schema declares it. `required` says the header is always sent; the OpenAPI document
 * moves it from the schema to the header (src/web/openapi-document.ts).
 */
export interface ResponseHeader {
  description: string;
  type: 'string' | 'integer';
  enum?: readonly string[];
  required?: true;
}

export const NO_STORE_HEADER: ResponseHeader = {
  description: 'Always `no-store`: contact data is private, and no answer of this API may be kept by a cache.',
  type: 'string',
  enum: ['no-store'],
  required: true,
};

/**
 * A documented error response for the OpenAPI document; the body is always ErrorSchema, never cached. `examples` names
 * each message the server sends with this status (@fastify/swagger makes them the response's named examples).
 */
export function errorResponse(description: string, headers: Record<string, ResponseHeader> = {}, examples: Record<string, string> = {}) {
  const named = Object.entries(examples).map(([summary, error]) => [summary, { summary, value: { error } }]);
  return {
    ...ErrorSchema,
    description,
    headers: { 'Cache-Control': NO_STORE_HEADER, ...headers },
    ...(named.length === 0 ? {} : { 'x-examples': Object.fromEntries(named) }),
  };
}
