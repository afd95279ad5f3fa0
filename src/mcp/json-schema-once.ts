import type * as z from 'zod';

type JsonSchemaOf = z.ZodType['~standard']['jsonSchema']['input'];

/**
 * Makes each schema's JSON Schema once per direction and options, in place. The SDK asks a tool's schemas for their JSON
 * Schema on every tools/call (to check the result against it) and tools/list, of each server, and each /mcp request
 * has a server of its own: zod made it anew each time, 18% of a list_contacts call's CPU. The schemas are this
 * module's callers' constants, never changed after they are made.
 */
export function makeJsonSchemasOnce(...schemas: z.ZodType[]): void {
  for (const schema of schemas) {
    const standard = schema['~standard'];
    const made = new Map<string, ReturnType<JsonSchemaOf>>();
    const once =
      (io: 'input' | 'output'): JsonSchemaOf =>
      (options) => {
        const key = `${io} ${JSON.stringify(options)}`;
        let jsonSchema = made.get(key);
        if (jsonSchema === undefined) made.set(key, (jsonSchema = standard.jsonSchema[io](options)));
        return jsonSchema;
      };
    Object.defineProperty(schema, '~standard', { value: { ...standard, jsonSchema: { input: once('input'), output: once('output') } } });
  }
}
