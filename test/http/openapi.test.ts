import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { normalizeContactInput } from '../../src/domain/contact-input.js';
import { createMemoryCounter } from '../../src/rate-limit/memory-counter.js';
import { bearer, buildTestApp } from '../support/app.js';
import { openApiResponseChecker, type OpenApiDocument } from '../support/openapi-responses.js';
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
    // As deployed by default: with a rate limit.
    app = await buildTestApp(database.store, {
      config: { rateLimit: { perMinute: 600, authFailuresPerMinute: 60 } },
      requestCounter: createMemoryCounter({ windowMs: 60_000 }),
    });
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

  it('declares on every operation every status the HTTP layer can answer, with errors as one $ref to Error', () => {
    const layer = ['400', '404', '405', '408', '413', '431', '500', '503'];
    for (const [path, operations] of Object.entries<Record<string, any>>(document.paths)) {
      for (const [method, operation] of Object.entries<any>(operations)) {
        expect(Object.keys(operation.responses), `${method} ${path}`).toEqual(expect.arrayContaining(layer));
        for (const [status, response] of Object.entries<any>(operation.responses)) {
          if (Number(status) < 400 || method === 'head') continue;
          expect(response.content['application/json'].schema, `${method} ${path} ${status}`).toEqual({
            $ref: '#/components/schemas/Error',
          });
          expect(response.headers['Cache-Control']).toMatchObject({ required: true, schema: { enum: ['no-store'] } });
        }
        expect(operation.responses['405'].headers.Allow).toMatchObject({ required: true, schema: { type: 'string' } });
      }
    }
    const responses = document.paths['/api/v1/contacts'].get.responses;
    expect(Object.keys(responses).sort()).toEqual([
      '200',
      '304',
      '400',
      '401',
      '403',
      '404',
      '405',
      '408',
      '413',
      '429',
      '431',
      '500',
      '503',
    ]);
    expect(responses['304'].content).toBeUndefined();
    expect(document.components.schemas.Error).toMatchObject({
      type: 'object',
      required: ['error'],
      properties: { error: { type: 'string' } },
    });
  });

  it('marks the headers that are always sent as required, and types the numeric ones as integers', () => {
    const responses = document.paths['/api/v1/contacts'].get.responses;
    expect(responses['200'].headers).toMatchObject({
      'Cache-Control': { required: true },
      ETag: { required: true },
      Vary: { required: true, schema: { enum: ['Accept-Encoding', 'Origin, Accept-Encoding'] } },
      'RateLimit-Policy': { required: true },
      'X-RateLimit-Limit': { required: true, schema: { type: 'integer' } },
      'X-RateLimit-Remaining': { schema: { type: 'integer' } },
    });
    // Left out while the rate-limit counter is unreachable (the request is let through without a count).
    expect(responses['200'].headers.RateLimit.required).toBeUndefined();
    expect(responses['401'].headers['WWW-Authenticate']).toMatchObject({ required: true });
    expect(responses['429'].headers['Retry-After']).toMatchObject({ required: true, schema: { type: 'integer' } });
    // A 400 for a missing Host comes before the key is counted.
    expect(responses['400'].headers['RateLimit-Policy'].required).toBeUndefined();
    for (const header of Object.values<any>(responses['200'].headers)) expect(header.schema).not.toHaveProperty('required');
  });

  it('declares HEAD beside each GET, without bodies, and no security on public operations', () => {
    for (const [path, operations] of Object.entries<Record<string, any>>(document.paths)) {
      expect(Object.keys(operations).sort(), path).toEqual(['get', 'head']);
      expect(operations.head.operationId).toBe(`${operations.get.operationId}-head`);
      for (const response of Object.values<any>(operations.head.responses)) expect(response.content).toBeUndefined();
    }
    for (const path of ['/healthz', '/readyz', '/api/v1/openapi.json']) expect(document.paths[path].get.security).toEqual([]);
  });

  it('names the deployment: servers from PUBLIC_URL (default /), contact from API_CONTACT, and the license', async () => {
    expect(document.servers).toEqual([{ url: '/', description: 'This deployment' }]);
    expect(document.info.contact).toEqual({ name: 'API support' });
    expect(document.info.license).toEqual({ name: 'MIT', identifier: 'MIT' });
    const named = await buildTestApp(database.store, {
      config: { openApi: { publicUrl: 'https://api.example.com/contacts', contact: { email: 'api@example.com' } } },
    });
    try {
      const served = (await named.inject({ method: 'GET', url: '/api/v1/openapi.json' })).json();
      expect(served.servers).toEqual([{ url: 'https://api.example.com/contacts', description: 'This deployment' }]);
      expect(served.info.contact).toEqual({ name: 'API support', email: 'api@example.com' });
    } finally {
      await named.close();
    }
  });

  it('declares 429 and the rate-limit headers only where requests are counted against a rate limit', async () => {
    const responses = document.paths['/api/v1/contacts'].get.responses;
    expect(responses['429'].description).toMatch(/Rate limit exceeded/);
    expect(responses['429'].description).toMatch(/Too many failed authentications/);
    // An address past its failed authentications is refused before any key is counted.
    expect(responses['429'].headers['Retry-After'].required).toBe(true);
    expect(responses['429'].headers['RateLimit-Policy'].required).toBeUndefined();
    for (const status of ['200', '304', '429']) {
      expect(Object.keys(responses[status].headers)).toEqual(
        expect.arrayContaining(['RateLimit-Policy', 'RateLimit', 'X-RateLimit-Limit', 'X-RateLimit-Remaining', 'X-RateLimit-Reset']),
      );
    }
    expect(document.paths['/healthz'].get.responses['429']).toBeUndefined();
    const unlimited = await buildTestApp(database.store);
    try {
      const served = (await unlimited.inject({ method: 'GET', url: '/api/v1/openapi.json' })).json();
      const unlimitedResponses = served.paths['/api/v1/contacts'].get.responses;
      expect(unlimitedResponses['429']).toBeUndefined();
      expect(Object.keys(unlimitedResponses['200'].headers)).not.toContain('RateLimit-Policy');
    } finally {
      await unlimited.close();
    }
    const addressOnly = await buildTestApp(database.store, {
      config: { rateLimit: { authFailuresPerMinute: 60 } },
      requestCounter: createMemoryCounter({ windowMs: 60_000 }),
    });
    try {
      const served = (await addressOnly.inject({ method: 'GET', url: '/api/v1/openapi.json' })).json();
      const addressOnlyResponses = served.paths['/api/v1/contacts'].get.responses;
      expect(Object.keys(addressOnlyResponses['429'].headers).sort()).toEqual(['Cache-Control', 'Retry-After']);
      expect(Object.keys(addressOnlyResponses['200'].headers)).not.toContain('RateLimit-Policy');
    } finally {
      await addressOnly.close();
    }
  });

  it('describes the health probes', () => {
    expect(document.paths['/healthz'].get.responses['200']).toBeDefined();
    expect(document.paths['/readyz'].get.responses['503']).toBeDefined();
  });

  it('validates real responses against the schemas it publishes', async () => {
    const check = openApiResponseChecker(document as OpenApiDocument);
    const exchange = async (url: string, headers: Record<string, string> = {}) => {
      const response = await app.inject({ method: 'GET', url, headers });
      return {
        method: 'GET',
        url,
        status: response.statusCode,
        headers: response.headers,
        body: response.rawPayload,
        json: () => response.json(),
      };
    };
    const page = await exchange('/api/v1/contacts', bearer(key));
    expect(check(page)).toEqual([]);
    expect(page.json().data[0].research_data).toEqual({ summary: 'r' });
    expect(page.json().data[0].researched_at).toBe('2024-05-02T07:30:00.500Z');
    expect(page.json().data[1]).not.toHaveProperty('research_data');
    expect(page.json().data[1]).not.toHaveProperty('researched_at');
    expect(check(await exchange('/api/v1/contacts'))).toEqual([]);
    // The checker is not a rubber stamp: a body, a status or a header the document does not declare is reported.
    expect(check({ ...page, body: Buffer.from('{"data":[{"id":1}]}') })).not.toEqual([]);
    expect(check({ ...page, status: 418 })).toEqual(['GET /api/v1/contacts → 418: status 418 is not declared']);
    expect(check({ ...page, headers: { ...page.headers, etag: undefined } })).toEqual([
      'GET /api/v1/contacts → 200: required header ETag is missing',
    ]);
  });
});
