import type { FastifyInstance, InjectOptions } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startAdminApp, TEST_ADMIN_TOKEN } from '../support/admin-app.js';
import { bearer, buildTestApp } from '../support/app.js';
import { createTestDatabase, type TestDatabase } from '../support/backends.js';
import { createKey, createUser } from '../support/seed.js';

/** Every header helmet knows, so that one it would add unasked shows up here. */
const SECURITY_HEADERS = [
  'content-security-policy',
  'content-security-policy-report-only',
  'cross-origin-embedder-policy',
  'cross-origin-opener-policy',
  'cross-origin-resource-policy',
  'origin-agent-cluster',
  'referrer-policy',
  'strict-transport-security',
  'x-content-type-options',
  'x-dns-prefetch-control',
  'x-download-options',
  'x-frame-options',
  'x-permitted-cross-domain-policies',
  'x-powered-by',
  'x-xss-protection',
];
const API_POLICY = "default-src 'none'; frame-ancestors 'none'";

function securityHeadersOf(headers: Record<string, unknown> | Headers): [string, unknown][] {
  const entries = headers instanceof Headers ? [...headers.entries()] : Object.entries(headers);
  return entries.filter(([name]) => SECURITY_HEADERS.includes(name));
}

function expected(hsts: string | null, policy = API_POLICY): [string, unknown][] {
  const headers: [string, unknown][] = [
    ['x-content-type-options', 'nosniff'],
    ['referrer-policy', 'no-referrer'],
    ['x-frame-options', 'DENY'],
    ['content-security-policy', policy],
  ];
  return hsts === null ? headers : [...headers, ['strict-transport-security', hsts]];
}

describe.each([
  { hstsMaxAgeSeconds: null, hsts: null },
  { hstsMaxAgeSeconds: 0, hsts: 'max-age=0' },
  { hstsMaxAgeSeconds: 31_536_000, hsts: 'max-age=31536000' },
])('security headers with HSTS_MAX_AGE=$hstsMaxAgeSeconds', ({ hstsMaxAgeSeconds, hsts }) => {
  let db: { database: TestDatabase; dispose: () => Promise<void> };
  let app: FastifyInstance;
  let key: string;
  beforeAll(async () => {
    db = await createTestDatabase('sqlite', null);
    const user = await createUser(db.database.store);
    key = (await createKey(db.database.store, user.id)).key;
    app = await buildTestApp(db.database.store, { config: { hstsMaxAgeSeconds } });
  });
  afterAll(async () => {
    await app?.close();
    await db?.dispose();
  });

  it('are the same on every door, refusals and errors included, and nothing more', async () => {
    const basic = `Basic ${Buffer.from(`user:${key}`).toString('base64')}`;
    const requests = [
      { method: 'GET', url: '/api/v1/contacts', headers: bearer(key) },
      { method: 'GET', url: '/api/v1/contacts' },
      { method: 'GET', url: '/nowhere' },
      { method: 'DELETE', url: '/api/v1/contacts' },
      { method: 'GET', url: '/api/v1/openapi.json' },
      { method: 'GET', url: '/healthz' },
      { method: 'GET', url: '/mcp' },
      { method: 'PROPFIND', url: '/dav/', headers: { authorization: basic, depth: '0' } },
      { method: 'OPTIONS', url: '/dav/' },
    ] as unknown as InjectOptions[];
    for (const request of requests) {
      const response = await app.inject(request);
      expect(securityHeadersOf(response.headers as Record<string, unknown>), `${request.method} ${request.url}`).toEqual(expected(hsts));
    }
  });

  it('carry the reference page’s own policy on /docs', async () => {
    const response = await app.inject({ method: 'GET', url: '/docs' });
    const policy = response.headers['content-security-policy'] as string;
    expect(policy).toContain("script-src 'self'");
    expect(securityHeadersOf(response.headers as Record<string, unknown>)).toEqual(expected(hsts, policy));
  });

  it('are the same on the admin API', async () => {
    const admin = await startAdminApp(db.database.store, { config: { hstsMaxAgeSeconds } });
    try {
      for (const [path, token] of [
        ['/admin/v1/users', null],
        ['/nowhere', TEST_ADMIN_TOKEN],
        ['/admin/v1/openapi.json', TEST_ADMIN_TOKEN],
      ] as const) {
        const response = await fetch(`${admin.url}${path}`, token === null ? {} : { headers: { authorization: `Bearer ${token}` } });
        await response.arrayBuffer();
        // Headers lists its names in alphabetical order.
        expect(securityHeadersOf(response.headers), path).toEqual(expected(hsts).sort(([a], [b]) => a.localeCompare(b)));
      }
    } finally {
      await admin.close();
    }
  });
});
