import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { normalizeContactInput } from '../../src/domain/contact-input.js';
import { bearer, buildTestApp } from '../support/app.js';
import { createTestDatabase, type TestDatabase } from '../support/backends.js';
import { contactRecord, createKey, createUser } from '../support/seed.js';

describe('GET /api/v1/openapi.json', () => {
  let app: FastifyInstance;
  let database: TestDatabase;
  let dispose: () => Promise<void>;
  let document: Record<string, any>;
  let key: string;

  beforeAll(async () => {
    ({ database, dispose } = await createTestDatabase('sqlite', null));
    const user = await createUser(database.store);
    key = (await createKey(database.store, user.id)).key;
    await database.store.contacts.importContacts(user.id, [
      {
        label: 'full',
        contact: normalizeContactInput({
          name: 'Full',
          email: 'f@example.com',
          tags: ['a', 'b'],
          enrichment: { deep: { x: [1, 2] } },
          enriched_at: '2024-05-01T09:30:00Z',
          research_data: { summary: 'r' },
          researched_at: '2024-05-02T09:30:00.5+02:00',
        }),
      },
      contactRecord({ name: 'Sparse' }),
    ]);
    app = await buildTestApp(database.store);
    const response = await app.inject({ method: 'GET', url: '/api/v1/openapi.json' });
    expect(response.statusCode).toBe(200);
    document = response.json();
  });
  afterAll(async () => {
    await app?.close();
    await dispose?.();
  });

  it('is OpenAPI 3.1 with info.version 1.0.0, served without a key', () => {
    expect(document.openapi).toBe('3.1.0');
    expect(document.info.version).toBe('1.0.0');
  });

  it('describes listContacts with its parameters, bearer security and ordering', () => {
    const operation = document.paths['/api/v1/contacts'].get;
    expect(operation.operationId).toBe('listContacts');
    expect(operation.security).toEqual([{ bearerAuth: [] }]);
    expect(document.components.securitySchemes.bearerAuth).toMatchObject({ type: 'http', scheme: 'bearer' });
    expect(operation.description).toMatch(/created_at` ascending, then `id` ascending/);
    const parameters = Object.fromEntries(operation.parameters.map((p: any) => [p.name, p]));
    expect(parameters.limit).toMatchObject({
      in: 'query',
      required: false,
      schema: { type: 'integer', minimum: 1, maximum: 100, default: 50 },
    });
    expect(parameters.offset).toMatchObject({ in: 'query', required: false, schema: { type: 'integer', minimum: 0, default: 0 } });
  });

  it('describes every status the endpoint returns, errors as { error: string }', () => {
    const responses = document.paths['/api/v1/contacts'].get.responses;
    expect(Object.keys(responses).sort()).toEqual(['200', '304', '400', '401', '403', '429', '500']);
    expect(responses['304'].content).toBeUndefined();
    expect(responses['304'].headers.ETag).toBeDefined();
    expect(responses['200'].headers.ETag).toBeDefined();
    for (const status of ['400', '401', '403', '429', '500']) {
      expect(responses[status].content['application/json'].schema).toMatchObject({
        type: 'object',
        required: ['error'],
        properties: { error: { type: 'string' } },
      });
    }
    expect(responses['401'].headers['WWW-Authenticate']).toBeDefined();
    expect(responses['200'].headers['Cache-Control']).toBeDefined();
  });

  it('documents the rate limit: 429 with Retry-After, and the rate-limit headers on 200 and 429', () => {
    const responses = document.paths['/api/v1/contacts'].get.responses;
    expect(responses['429'].description).toMatch(/Rate limit exceeded/);
    expect(responses['429'].headers['Retry-After']).toBeDefined();
    for (const status of ['200', '429']) {
      expect(Object.keys(responses[status].headers)).toEqual(
        expect.arrayContaining(['RateLimit-Policy', 'RateLimit', 'X-RateLimit-Limit', 'X-RateLimit-Remaining', 'X-RateLimit-Reset']),
      );
    }
  });

  it('describes the health probes', () => {
    expect(document.paths['/healthz'].get.responses['200']).toBeDefined();
    expect(document.paths['/readyz'].get.responses['503']).toBeDefined();
  });

  it('validates real responses against the schemas it publishes', async () => {
    const ajv = new Ajv2020({ strict: false });
    addFormats.default(ajv);
    const responses = document.paths['/api/v1/contacts'].get.responses;
    const validate200 = ajv.compile(responses['200'].content['application/json'].schema);
    const page = (await app.inject({ method: 'GET', url: '/api/v1/contacts', headers: bearer(key) })).json();
    expect(validate200(page), JSON.stringify(validate200.errors)).toBe(true);
    expect(page.data[0].research_data).toEqual({ summary: 'r' });
    expect(page.data[0].researched_at).toBe('2024-05-02T07:30:00.500Z');
    expect(page.data[1]).not.toHaveProperty('research_data');
    expect(page.data[1]).not.toHaveProperty('researched_at');
    const validate401 = ajv.compile(responses['401'].content['application/json'].schema);
    expect(validate401((await app.inject({ method: 'GET', url: '/api/v1/contacts' })).json())).toBe(true);
  });
});
