import Type, { type TUnsafe } from 'typebox';

/** A JSON Schema 2020-12 / OpenAPI 3.1 nullable type (`type: [T, "null"]`), cheaper to serialize than anyOf. */
export function NullableString(options: Record<string, unknown> = {}): TUnsafe<string | null> {
  return Type.Unsafe<string | null>({ type: ['string', 'null'], ...options });
}

export function NullableObject(options: Record<string, unknown> = {}): TUnsafe<Record<string, unknown> | null> {
  return Type.Unsafe<Record<string, unknown> | null>({ type: ['object', 'null'], additionalProperties: true, ...options });
}

export function NullableStringArray(options: Record<string, unknown> = {}): TUnsafe<string[] | null> {
  return Type.Unsafe<string[] | null>({ type: ['array', 'null'], items: { type: 'string' }, ...options });
}

export function FreeFormObject(options: Record<string, unknown> = {}): TUnsafe<Record<string, unknown>> {
  return Type.Unsafe<Record<string, unknown>>({ type: 'object', additionalProperties: true, ...options });
}

/** One of a fixed list of strings (`type: "string", enum: […]`), which validation errors can name. */
export function StringEnum<Value extends string>(values: readonly Value[], options: Record<string, unknown> = {}): TUnsafe<Value> {
  return Type.Unsafe<Value>({ type: 'string', enum: [...values], ...options });
}
