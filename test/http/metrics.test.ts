import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.js';
import { generateApiKey } from '../../src/domain/api-key.js';
import { RATE_LIMIT_WINDOW_MS } from '../../src/domain/rate-limit.js';
import { createMemoryCounter } from '../../src/rate-limit/memory-counter.js';
import { startServer } from '../../src/server.js';
import { buildTestApp } from '../support/app.js';
import { describeEachBackend } from '../support/backends.js';
import { listContacts } from '../support/requests.js';
import { createKey, createUser, TEST_KEY_PREFIX } from '../support/seed.js';

const TOKEN = 'metrics-token-for-tests-0123456789';

/** The value of one Prometheus sample, or undefined when the exposition has no such sample. */
function sample(exposition: string, name: string, labels: Record<string, string> = {}): number | undefined {
  const wanted = Object.entries(labels).map(([label, value]) => `${label}="${value}"`);
  for (const line of exposition.split('\n')) {
    const match = /^([a-zA-Z_:][\w:]*)(?:\{(.*)\})? (\S+)$/.exec(line);
    if (!match || match[1] !== name) continue;
    const present = (match[2] ?? '').split(',');
    if (wanted.every((pair) => present.includes(pair))) return Number(match[3]);
  }
  return undefined;
}

describeEachBackend('GET /metrics (Prometheus)', (db) => {
  let app: FastifyInstance;
  let exposition: string;

  beforeAll(async () => {
    const store = db().store;
    const owner = await createUser(store);
    const freeOwner = await createUser(store, 'free');
    const keys = {
      ok: (await createKey(store, owner.id)).key,
      revoked: await createKey(store, owner.id),
      expired: (await createKey(store, owner.id, { expiresAt: '2020-01-01T00:00:00.000Z' })).key,
      unscoped: (await createKey(store, owner.id, { scopes: [] })).key,
      free: (await createKey(store, freeOwner.id)).key,
    };
    await store.keys.revoke(keys.revoked.id);
    app = await buildTestApp(store, {
      config: { rateLimit: { perMinute: 2 }, metrics: { token: TOKEN } },
      requestCounter: createMemoryCounter({ windowMs: RATE_LIMIT_WINDOW_MS }),
    });
    const get = (url: string, headers: Record<string, string> = {}) => app.inject({ method: 'GET', url, headers });
    await listContacts(app, keys.ok, 'limit=1');
    await listContacts(app, keys.ok, 'limit=2');
    await listContacts(app, keys.ok, 'limit=3');
    await listContacts(app, null);
    await listContacts(app, 'not-a-key');
    await listContacts(app, generateApiKey(TEST_KEY_PREFIX));
    await listContacts(app, keys.revoked.key);
    await listContacts(app, keys.expired);
    await listContacts(app, keys.unscoped);
    await listContacts(app, keys.free);
    await get('/no/such/path-4f2a?secret=1');
    const scraped = await get('/metrics', { authorization: `Bearer ${TOKEN}` });
    expect(scraped.statusCode).toBe(200);
    expect(scraped.headers['content-type']).toMatch(/^text\/plain; version=0\.0\.4/);
    exposition = scraped.body;
  });
  afterAll(async () => {
    await app?.close();
  });

  it('counts requests by method, route pattern and status, never by raw URL', () => {
    const contacts = { method: 'GET', route: '/api/v1/contacts' };
    expect(sample(exposition, 'contacts_api_http_requests_total', { ...contacts, status_code: '200' })).toBe(2);
    expect(sample(exposition, 'contacts_api_http_requests_total', { ...contacts, status_code: '429' })).toBe(1);
    expect(sample(exposition, 'contacts_api_http_requests_total', { ...contacts, status_code: '401' })).toBe(5);
    expect(sample(exposition, 'contacts_api_http_requests_total', { ...contacts, status_code: '403' })).toBe(2);
    expect(sample(exposition, 'contacts_api_http_requests_total', { method: 'GET', route: 'unmatched', status_code: '404' })).toBe(1);
    expect(exposition).not.toContain('path-4f2a');
    expect(exposition).not.toContain('limit=');
  });

  it('times requests in a histogram with the same labels', () => {
    const labels = { method: 'GET', route: '/api/v1/contacts', status_code: '200' };
    expect(sample(exposition, 'contacts_api_http_request_duration_seconds_count', labels)).toBe(2);
    expect(sample(exposition, 'contacts_api_http_request_duration_seconds_bucket', { ...labels, le: '+Inf' })).toBe(2);
  });

  it('counts authentication failures by reason', () => {
    for (const reason of ['missing', 'malformed', 'unknown', 'revoked', 'expired', 'scope', 'plan']) {
      expect(sample(exposition, 'contacts_api_auth_failures_total', { reason }), reason).toBe(1);
    }
  });

  it('counts rate-limited requests, and fail-open requests (none here)', () => {
    expect(sample(exposition, 'contacts_api_rate_limited_requests_total')).toBe(1);
    expect(sample(exposition, 'contacts_api_rate_limit_fail_open_total')).toBe(0);
  });

  it('shows the database pool’s use on PostgreSQL, and nothing for SQLite, which has no pool', () => {
    const total = sample(exposition, 'contacts_api_db_pool_connections', { state: 'total' });
    const waiting = sample(exposition, 'contacts_api_db_pool_waiting_requests');
    if (db().backend === 'postgres') {
      expect(total).toBeGreaterThanOrEqual(1);
      expect(sample(exposition, 'contacts_api_db_pool_connections', { state: 'idle' })).toBeGreaterThanOrEqual(0);
      expect(waiting).toBe(0);
    } else {
      expect(total).toBeUndefined();
      expect(waiting).toBeUndefined();
    }
  });

  it('refuses a scrape without the token, or with another, as 401 JSON', async () => {
    for (const headers of [{}, { authorization: `Bearer ${TOKEN}x` }, { authorization: TOKEN }]) {
      const response = await app.inject({ method: 'GET', url: '/metrics', headers });
      expect(response.statusCode).toBe(401);
      expect(response.json()).toEqual({ error: 'Invalid metrics token' });
    }
  });

  it('stays out of the OpenAPI document', async () => {
    const document = (await app.inject({ method: 'GET', url: '/api/v1/openapi.json' })).json();
    expect(document.paths).not.toHaveProperty('/metrics');
  });

  it('is not served at all (404) when neither METRICS_TOKEN nor METRICS_PORT is set', async () => {
    const plain = await buildTestApp(db().store);
    try {
      const response = await plain.inject({ method: 'GET', url: '/metrics', headers: { authorization: `Bearer ${TOKEN}` } });
      expect(response.statusCode).toBe(404);
    } finally {
      await plain.close();
    }
  });

  it('with METRICS_PORT, is served on that port only, with process metrics', async () => {
    const config = loadConfig({ DATABASE_URL: db().databaseUrl, METRICS_PORT: '0', LOG_LEVEL: 'silent' });
    const server = await startServer(config, { host: '127.0.0.1', port: 0 });
    try {
      expect(server.metricsUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/metrics$/);
      await fetch(`${server.url}/healthz`);
      const scraped = await fetch(server.metricsUrl!);
      expect(scraped.status).toBe(200);
      const text = await scraped.text();
      expect(sample(text, 'contacts_api_http_requests_total', { route: '/healthz', status_code: '200' })).toBe(1);
      expect(sample(text, 'process_resident_memory_bytes')).toBeGreaterThan(0);
      expect((await fetch(`${server.url}/metrics`)).status).toBe(404);
      expect((await fetch(server.metricsUrl!.replace('/metrics', '/other'))).status).toBe(404);
    } finally {
      await server.close();
    }
  });
});
