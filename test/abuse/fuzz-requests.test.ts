import { METHODS } from 'node:http';
import { brotliDecompressSync, gunzipSync, inflateSync } from 'node:zlib';
import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import fc from 'fast-check';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { generateApiKey } from '../../src/domain/api-key.js';
import { normalizeContactInput } from '../../src/domain/contact-input.js';
import { buildTestApp } from '../support/app.js';
import { describeEachBackend } from '../support/backends.js';
import { createKey, createUser, importNumberedContacts, TEST_KEY_PREFIX } from '../support/seed.js';

/** Enough runs to reach the odd corners in a few seconds per backend. */
const RUNS = 400;

/** A body as the client reads it: a fuzzed Accept-Encoding (`*`, `gzip;q=0.5`) may rightly get the page compressed. */
function decodedBody(raw: Buffer, encoding: string | string[] | undefined): string {
  const decoders: Record<string, (compressed: Buffer) => Buffer> = { gzip: gunzipSync, br: brotliDecompressSync, deflate: inflateSync };
  const name = String(encoding ?? '');
  return (Object.hasOwn(decoders, name) ? decoders[name]!(raw) : raw).toString('utf8');
}
const SQL_INJECTION = [
  "' OR '1'='1",
  '1; DROP TABLE contacts; --',
  "1' UNION SELECT secret_hash FROM api_keys --",
  '$1',
  "'); DELETE FROM users; --",
];
const NUMBERISH = [
  '',
  '0',
  '1',
  '50',
  '100',
  '101',
  '-1',
  '+5',
  '1e2',
  '0x10',
  ' 5',
  '5 ',
  '1.0',
  'NaN',
  'Infinity',
  '00050',
  '١٠',
  '１０',
  '2147483647',
  '2147483648',
  '99999999999999999999999999999999',
  '9'.repeat(400),
];
const PERCENT_BROKEN = ['%', '%Z', '%G0', '%%', '%0', '%E2%82', '%C0%80', '%ED%A0%80', '%FF%FE', '%00', '%0A', '%0D%0A'];
/** Header names this test leaves alone: they frame the request itself rather than carry input. */
const FRAMING_HEADERS = new Set(['host', 'content-length', 'transfer-encoding', 'connection', 'expect', 'upgrade', 'te', 'trailer']);

/** Characters a real HTTP/1.1 header value can carry: visible ASCII, space, tab and obs-text (0x80–0xFF). */
const headerChar = fc
  .oneof(fc.integer({ min: 0x20, max: 0x7e }), fc.constant(0x09), fc.integer({ min: 0x80, max: 0xff }))
  .map((code) => String.fromCharCode(code));
const headerText = (maxLength: number) => fc.string({ unit: headerChar, maxLength });

const percentByte = fc.integer({ min: 0, max: 255 }).map((byte) => `%${byte.toString(16).padStart(2, '0').toUpperCase()}`);
const encodedText = fc.string({ unit: 'grapheme', maxLength: 20 }).map(encodeURIComponent);
const rawQueryText = fc
  .array(fc.oneof(percentByte, fc.constantFrom(...PERCENT_BROKEN), fc.constantFrom('a', '=', '+', ';', '[]', '.', '__proto__', '[0]')), {
    maxLength: 8,
  })
  .map((parts) => parts.join(''));

const queryValue = fc.oneof(
  fc.constantFrom(...NUMBERISH),
  fc.bigInt({ min: -(10n ** 40n), max: 10n ** 40n }).map(String),
  fc.constantFrom(...SQL_INJECTION).map(encodeURIComponent),
  encodedText,
  rawQueryText,
);
const queryKey = fc.oneof(
  {
    weight: 4,
    arbitrary: fc.constantFrom('limit', 'offset', 'q', 'owner_id', 'user_id', 'id', 'LIMIT', 'limit[]', '__proto__', 'constructor', ''),
  },
  { weight: 1, arbitrary: encodedText },
  { weight: 1, arbitrary: rawQueryText },
);
const queryString = fc.oneof(
  fc
    .array(fc.tuple(queryKey, queryValue, fc.boolean()), { maxLength: 6 })
    .map((pairs) => pairs.map(([key, value, bare]) => (bare && value === '' ? key : `${key}=${value}`)).join('&')),
  // Valid pages too, so that many runs reach a 200 to validate.
  fc
    .record({ limit: fc.integer({ min: 1, max: 100 }), offset: fc.integer({ min: 0, max: 40 }) }, { requiredKeys: [] })
    .map((page) => new URLSearchParams(Object.entries(page).map(([key, value]): [string, string] => [key, String(value)])).toString()),
);

const pathSegment = fc.oneof(
  fc.uuid(),
  encodedText,
  rawQueryText,
  fc.constantFrom(...SQL_INJECTION).map(encodeURIComponent),
  fc.constantFrom('..', '.', '', '%2e%2e', 'v1'),
);

describeEachBackend('fuzzed requests never produce a 5xx or a body off the published schema', (db) => {
  let app: FastifyInstance;
  let document: { paths: Record<string, Record<string, any>> };
  let ajv: Ajv2020;
  let validateError: ValidateFunction;
  const keys: Record<'active' | 'revoked' | 'noScope' | 'freePlan', string> = { active: '', revoked: '', noScope: '', freePlan: '' };
  /** Well-formed keys (prefix, length, checksum) that no user has. */
  const unknownKeys = Array.from({ length: 10 }, () => generateApiKey(TEST_KEY_PREFIX));
  let contactIds: string[] = [];

  beforeAll(async () => {
    const { store } = db();
    const user = await createUser(store);
    const freeUser = await createUser(store, 'free');
    keys.active = (await createKey(store, user.id)).key;
    const revoked = await createKey(store, user.id);
    await store.keys.revoke(revoked.id);
    keys.revoked = revoked.key;
    keys.noScope = (await createKey(store, user.id, { scopes: [] })).key;
    keys.freePlan = (await createKey(store, freeUser.id)).key;
    await importNumberedContacts(store, user.id, 30, 'Fuzz');
    await store.contacts.importContacts(user.id, [
      {
        label: 'rich',
        contact: normalizeContactInput({
          name: 'Zoë 李 🚀',
          email: 'zoe@example.com',
          tags: ['ü', 'x y'],
          enrichment: { nested: { list: [1, 'two', null] } },
          research_data: { summary: 'r' },
          researched_at: '2024-05-02T09:30:00.5+02:00',
          birthday: '--02-29',
        }),
      },
    ]);
    contactIds = (await store.contacts.listPage(user.id, { limit: 100, offset: 0 })).contacts.map((contact) => contact.id);
    app = await buildTestApp(store);
    document = (await app.inject({ method: 'GET', url: '/api/v1/openapi.json' })).json();
    ajv = new Ajv2020({ strict: false, allErrors: false });
    addFormats.default(ajv);
    // The whole document is registered so that response schemas may $ref its components.
    ajv.addSchema(document, 'openapi.json');
    validateError = ajv.compile({ $ref: 'openapi.json#/components/schemas/Error' });
  });
  afterAll(async () => {
    await app?.close();
  });

  function responseValidator(template: string, method: string, status: number): ValidateFunction | undefined {
    const content = document.paths[template]?.[method.toLowerCase()]?.responses?.[String(status)]?.content?.['application/json'];
    if (!content?.schema) return undefined;
    const pointer = ['paths', template, method.toLowerCase(), 'responses', String(status), 'content', 'application/json', 'schema']
      .map((part) => part.replace(/~/g, '~0').replace(/\//g, '~1'))
      .join('/');
    return ajv.getSchema(`openapi.json#/${pointer}`);
  }

  it('random methods, paths, query strings, headers and keys', async () => {
    const templates = Object.keys(document.paths);
    const authorization = fc.oneof(
      { weight: 6, arbitrary: fc.constant(`Bearer ${keys.active}`) },
      fc.constantFrom('revoked', 'noScope', 'freePlan').map((which) => `Bearer ${keys[which as keyof typeof keys]}`),
      fc.constantFrom(...unknownKeys).map((key) => `Bearer ${key}`),
      fc.constantFrom(
        `bearer ${keys.active}`,
        `BEARER \t${keys.active}  `,
        `Basic ${keys.active}`,
        keys.active,
        `Bearer ${keys.active}x`,
        `Bearer ${keys.active.slice(0, -1)}`,
        `Bearer ${keys.active} ${keys.active}`,
        'Bearer',
        'Bearer ',
        '',
        'Bearer cnt_live_',
      ),
      fc.constantFrom(...SQL_INJECTION).map((text) => `Bearer ${text}`),
      headerText(60).map((text) => `Bearer ${text}`),
      headerText(200),
      fc.integer({ min: 1_000, max: 8_000 }).map((length) => `Bearer ${'A'.repeat(length)}`),
    );
    const otherHeaders = fc.dictionary(
      fc
        .oneof(
          fc.constantFrom(
            'x-request-id',
            'content-type',
            'accept',
            'origin',
            'x-forwarded-for',
            'cookie',
            'if-none-match',
            'accept-encoding',
          ),
          fc.stringMatching(/^[a-z][a-z0-9-]{0,20}$/),
        )
        .filter((name) => !FRAMING_HEADERS.has(name) && name !== 'authorization'),
      headerText(300),
      { maxKeys: 4 },
    );
    // Mostly the contact endpoints, where the data is.
    const template = fc.oneof(
      { weight: 3, arbitrary: fc.constantFrom(...templates.filter((t) => t.startsWith('/api/v1/contacts'))) },
      { weight: 1, arbitrary: fc.constantFrom(...templates) },
    );
    const method = fc.oneof(
      { weight: 12, arbitrary: fc.constant('GET') },
      { weight: 2, arbitrary: fc.constant('HEAD') },
      { weight: 3, arbitrary: fc.constantFrom(...METHODS.filter((name) => name !== 'CONNECT')) },
    );
    const path = fc.oneof(
      {
        weight: 8,
        arbitrary: fc
          .tuple(template, fc.array(fc.oneof(pathSegment, fc.constantFrom(...contactIds)), { minLength: 4, maxLength: 4 }))
          .map(([template, fills]) => ({ template, url: template.replace(/\{[^}]+\}/g, () => fills.shift() ?? 'x') })),
      },
      {
        weight: 1,
        arbitrary: fc.array(pathSegment, { maxLength: 4 }).map((segments) => ({ template: null, url: `/${segments.join('/')}` })),
      },
      { weight: 1, arbitrary: fc.constantFrom(...templates).map((template) => ({ template: null, url: `${template.toUpperCase()}/` })) },
    );

    await fc.assert(
      fc.asyncProperty(
        method,
        path,
        queryString,
        fc.option(authorization, { nil: undefined, freq: 8 }),
        otherHeaders,
        fc.option(headerText(500), { nil: undefined }),
        async (method, { template, url }, query, auth, headers, payload) => {
          const response = await app.inject({
            method: method as 'GET',
            url: query === '' ? url : `${url}?${query}`,
            headers: { ...headers, ...(auth === undefined ? {} : { authorization: auth }) },
            ...(payload !== undefined && !['GET', 'HEAD'].includes(method) ? { payload } : {}),
          });
          expect(response.statusCode).toBeLessThan(500);
          if (method === 'HEAD') return;
          expect(response.headers['content-type']).toMatch(/^application\/json/);
          const body: unknown = JSON.parse(decodedBody(response.rawPayload, response.headers['content-encoding']));
          if (response.statusCode >= 400) {
            expect(validateError(body), `${response.statusCode} ${response.body}`).toBe(true);
            return;
          }
          expect(response.statusCode).toBe(200);
          const validate = template === null ? undefined : responseValidator(template, method, 200);
          expect(validate, `200 from ${method} ${url} that the document does not describe`).toBeDefined();
          expect(validate!(body), JSON.stringify(validate!.errors)).toBe(true);
        },
      ),
      { numRuns: RUNS },
    );
  });
});
