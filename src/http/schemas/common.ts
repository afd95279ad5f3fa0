import Type, { type Static } from 'typebox';

export const ErrorSchema = Type.Object(
  { error: Type.String({ description: 'What went wrong, in words safe to show.' }) },
  { additionalProperties: false, description: 'Every error body has this form.' },
);

export type ErrorBody = Static<typeof ErrorSchema>;

/** A documented error response for the OpenAPI document; the body is always ErrorSchema. */
export function errorResponse(description: string, headers?: Record<string, { description: string; type: string }>) {
  return { ...ErrorSchema, description, ...(headers ? { headers } : {}) };
}
