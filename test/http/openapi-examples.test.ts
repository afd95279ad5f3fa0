import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createMemoryCounter } from '../../src/rate-limit/memory-counter.js';
import { buildTestApp } from '../support/app.js';
import { createTestDatabase } from '../support/backends.js';
import { ALWAYS_LISTED_FIELDS } from '../support/contact-fixtures.js';

type Media = { schema: object; example?: unknown; examples?: Record<string, { value: unknown }> };
type Response = { content?: Record<string, Media> };
type Document = {
  paths: Record<string, Record<string, { operationId?: string; responses: Record<string, Response> }>>;
  components: object;
};

/** Every example of the document with where it is: `GET /path 200 application/json (name)`. */
function examplesOf(document: Document): { where: string; schema: object; value: unknown }[] {
  const found: { where: string; schema: object; value: unknown }[] = [];
  for (const [path, operations] of Object.entries(document.paths)) {
    for (const [method, operation] of Object.entries(operations)) {
      for (const [status, response] of Object.entries(operation.responses)) {
        for (const [type, media] of Object.entries(response.content ?? {})) {
          const where = `${method.toUpperCase()} ${path} ${status} ${type}`;
          if (media.example !== undefined) found.push({ where, schema: media.schema, value: media.example });
          for (const [name, { value }] of Object.entries(media.examples ?? {}))
            found.push({ where: `${where} (${name})`, schema: media.schema, value });
        }
      }
    }
  }
  return found;
}

describe('the OpenAPI document’s examples', () => {
  let document: Document;
  let dispose: () => Promise<void>;

  beforeAll(async () => {
    let store;
    ({
      database: { store },
      dispose,
    } = await createTestDatabase('sqlite', null));
    const app = await buildTestApp(store, {
      config: { rateLimit: { perMinute: 600 } },
      requestCounter: createMemoryCounter({ windowMs: 60_000 }),
    });
    document = (await app.inject({ method: 'GET', url: '/api/v1/openapi.json' })).json();
    await app.close();
  });
  afterAll(() => dispose());

  it('show a real page of the listing: contacts with every field in order, and a pagination that adds up', () => {
    const media = document.paths['/api/v1/contacts']!.get!.responses['200']!.content!['application/json']!;
    const page = media.example as { data: Record<string, unknown>[]; pagination: Record<string, number | null> };
    expect(page.data.length).toBeGreaterThan(1);
    for (const contact of page.data) {
      expect(Object.keys(contact).slice(0, ALWAYS_LISTED_FIELDS.length)).toEqual(ALWAYS_LISTED_FIELDS);
    }
    const { limit, offset, total, nextOffset } = page.pagination;
    expect(page.data.length).toBeLessThanOrEqual(limit!);
    expect(total).toBeGreaterThan(offset! + page.data.length);
    expect(nextOffset).toBe(offset! + page.data.length);
  });

  it('give every error response of the listing the messages the server sends', () => {
    const responses = document.paths['/api/v1/contacts']!.get!.responses;
    const errors = Object.entries(responses).filter(([status]) => Number(status) >= 400);
    expect(errors.length).toBeGreaterThan(8);
    for (const [status, response] of errors) {
      const examples = Object.values(response.content!['application/json']!.examples ?? {});
      expect(examples.length, `${status} has examples`).toBeGreaterThan(0);
      for (const { value } of examples) expect((value as { error: string }).error, status).toMatch(/^[A-Z]\S* .{8,}$/);
    }
    const messages = (status: string) =>
      Object.values(responses[status]!.content!['application/json']!.examples!).map(({ value }) => value);
    expect(messages('401')).toEqual([{ error: 'Invalid or inactive API key' }]);
    expect(messages('400')).toContainEqual({ error: 'Query parameter "limit" must be a base-10 integer from 1 to 100; got "500"' });
  });

  it('each fit the schema of the response it illustrates', () => {
    const ajv = new Ajv2020({ strict: false, allErrors: true });
    addFormats.default(ajv);
    ajv.addSchema({ $id: 'openapi', components: document.components });
    const examples = examplesOf(document);
    expect(examples.length).toBeGreaterThan(20);
    for (const { where, schema, value } of examples) {
      const validate = ajv.compile(JSON.parse(JSON.stringify(schema).replaceAll('"#/components/', '"openapi#/components/')) as object);
      expect(validate(value) ? [] : validate.errors, where).toEqual([]);
    }
  });
});
