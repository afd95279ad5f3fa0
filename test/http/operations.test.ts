import Fastify, { type FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import securityHeaders, { API_CONTENT_SECURITY_POLICY } from '../../src/web/plugins/security-headers.js';
import type { Store } from '../../src/store/store.js';
import { bearer, buildTestApp } from '../support/app.js';
import { createTestDatabase, describeEachBackend } from '../support/backends.js';
import { captureLogs } from '../support/log-capture.js';
import { listContactChanges, listContacts } from '../support/requests.js';
import { createKey, createUser } from '../support/seed.js';
import { overrideStore } from '../support/store-override.js';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

describeEachBackend('health and readiness probes', (db) => {
  let app: FastifyInstance;
  beforeAll(async () => {
    app = await buildTestApp(db().store);
  });
  afterAll(async () => {
    await app?.close();
  });

  it.each(['/healthz', '/readyz'])('%s answers 200 {"status":"ok"} without a key, never cached', async (url) => {
    const response = await app.inject({ method: 'GET', url });
    expect(response.statusCode).toBe(200);
    expect(response.json()).toEqual({ status: 'ok' });
    expect(response.headers['cache-control']).toBe('no-store');
  });

  it('/readyz answers 503 with a JSON error once the database is gone, while /healthz stays 200', async () => {
    const { database, dispose } = await createTestDatabase(db().backend);
    const closedApp = await buildTestApp(database.store);
    try {
      await database.store.close();
      const response = await closedApp.inject({ method: 'GET', url: '/readyz' });
      expect(response.statusCode).toBe(503);
      expect(response.json()).toEqual({ error: 'Database unavailable' });
      expect(response.headers['cache-control']).toBe('no-store');
      expect((await closedApp.inject({ method: 'GET', url: '/healthz' })).statusCode).toBe(200);
    } finally {
      await closedApp.close();
      await dispose();
    }
  });
});

describe('readiness against a database that hangs', () => {
  it('answers 503 within its own bound instead of waiting for the database', async () => {
    const { database, dispose } = await createTestDatabase('sqlite', null);
    const app = await buildTestApp(overrideStore(database.store, { ping: () => new Promise<void>(() => undefined) }));
    try {
      const response = await app.inject({ method: 'GET', url: '/readyz' });
      expect(response.statusCode).toBe(503);
      expect(response.json()).toEqual({ error: 'Database unavailable' });
    } finally {
      await app.close();
      await dispose();
    }
  });
});

describe('HTTP hardening', () => {
  let store: Store;
  let dispose: () => Promise<void>;
  let key: string;
  const apps: FastifyInstance[] = [];
  const appWith = async (options: Parameters<typeof buildTestApp>[1]) => {
    const app = await buildTestApp(store, options);
    apps.push(app);
    return app;
  };

  beforeAll(async () => {
    const created = await createTestDatabase('sqlite', null);
    store = created.database.store;
    dispose = created.dispose;
    key = (await createKey(store, (await createUser(store)).id)).key;
  });
  afterAll(async () => {
    await Promise.all(apps.map((app) => app.close()));
    await dispose?.();
  });

  describe('security headers', () => {
    it('sends headers fit for a JSON API on success and on every error', async () => {
      const app = await appWith({});
      const responses = await Promise.all([
        listContacts(app, key),
        listContacts(app, null),
        app.inject({ method: 'GET', url: '/nowhere' }),
        app.inject({ method: 'DELETE', url: '/api/v1/contacts' }),
      ]);
      expect(responses.map((response) => response.statusCode)).toEqual([200, 401, 404, 405]);
      for (const response of responses) {
        expect(response.headers).toMatchObject({
          'x-content-type-options': 'nosniff',
          'referrer-policy': 'no-referrer',
          'x-frame-options': 'DENY',
          'content-security-policy': "default-src 'none'; frame-ancestors 'none'",
        });
        expect(response.headers).not.toHaveProperty('strict-transport-security');
      }
    });

    it('sends Strict-Transport-Security only when configured', async () => {
      const app = await appWith({ config: { hstsMaxAgeSeconds: 31_536_000 } });
      const response = await app.inject({ method: 'GET', url: '/healthz' });
      expect(response.headers['strict-transport-security']).toBe('max-age=31536000');
    });

    it('lets a route that serves HTML set its own Content-Security-Policy', async () => {
      const app = Fastify();
      apps.push(app);
      await app.register(securityHeaders, { hstsMaxAgeSeconds: null });
      const pagePolicy = "default-src 'self'; script-src 'self'";
      app.get('/page', { config: { contentSecurityPolicy: pagePolicy } }, async () => 'html');
      app.get('/data', async () => ({}));
      expect((await app.inject({ method: 'GET', url: '/page' })).headers['content-security-policy']).toBe(pagePolicy);
      expect((await app.inject({ method: 'GET', url: '/data' })).headers['content-security-policy']).toBe(API_CONTENT_SECURITY_POLICY);
    });
  });

  describe('CORS', () => {
    const origin = 'https://app.example.com';

    it('sends no CORS header when CORS_ORIGINS is empty', async () => {
      const app = await appWith({});
      const response = await listContacts(app, key, '', { origin });
      expect(Object.keys(response.headers).filter((name) => name.startsWith('access-control-'))).toEqual([]);
      expect((await app.inject({ method: 'OPTIONS', url: '/api/v1/contacts', headers: { origin } })).statusCode).toBe(405);
    });

    it('allows exactly the listed origins, exposing the entity tag, rate-limit and request-id headers', async () => {
      const app = await appWith({ config: { corsOrigins: [origin] } });
      const allowed = await listContacts(app, key, '', { origin });
      expect(allowed.statusCode).toBe(200);
      expect(allowed.headers['access-control-allow-origin']).toBe(origin);
      expect(allowed.headers['access-control-expose-headers']).toBe(
        'ETag, RateLimit, RateLimit-Policy, Retry-After, WWW-Authenticate, X-RateLimit-Limit, X-RateLimit-Remaining, X-RateLimit-Reset, X-Request-Id',
      );
      expect(allowed.headers).not.toHaveProperty('access-control-allow-credentials');
      const refusedKeyButAllowedOrigin = await listContacts(app, null, '', { origin });
      expect(refusedKeyButAllowedOrigin.statusCode).toBe(401);
      expect(refusedKeyButAllowedOrigin.headers['access-control-allow-origin']).toBe(origin);

      for (const other of ['https://evil.example.com', 'https://app.example.com.evil.net', 'http://app.example.com']) {
        const response = await listContacts(app, key, '', { origin: other });
        expect(response.headers).not.toHaveProperty('access-control-allow-origin');
      }
    });

    it('says Vary: Origin beside Accept-Encoding on every route that varies on both, cacheable ones included', async () => {
      const app = await appWith({ config: { corsOrigins: [origin] } });
      const docs = await app.inject({ method: 'GET', url: '/docs' });
      const bundle = /<script src="([^"]+)"/.exec(docs.body)![1]!;
      const sync = (await listContactChanges(app, key)).json<{ next_since: string }>();
      for (const url of [
        '/api/v1/openapi.json',
        '/docs',
        bundle,
        '/api/v1/contacts',
        `/api/v1/contacts/changes?since=${sync.next_since}`,
      ]) {
        for (const headers of [{ origin }, { origin: 'https://other.example.com' }, {}]) {
          const response = await app.inject({ method: 'GET', url, headers: { ...bearer(key), 'accept-encoding': 'br', ...headers } });
          expect(response.statusCode, url).toBe(200);
          expect(response.headers.vary, url).toBe('Origin, Accept-Encoding');
        }
      }
    });

    it('answers a preflight with the allowed methods and headers', async () => {
      const app = await appWith({ config: { corsOrigins: [origin] } });
      const response = await app.inject({
        method: 'OPTIONS',
        url: '/api/v1/contacts',
        headers: { origin, 'access-control-request-method': 'GET', 'access-control-request-headers': 'authorization' },
      });
      expect(response.statusCode).toBe(204);
      expect(response.headers).toMatchObject({
        'access-control-allow-origin': origin,
        'access-control-allow-methods': 'GET, HEAD, POST',
        'access-control-allow-headers': 'Authorization, Content-Type, Accept, Mcp-Protocol-Version, X-Request-Id, If-None-Match',
        'access-control-max-age': '600',
      });
    });
  });

  describe('X-Request-Id', () => {
    it('returns a sane client id unchanged, on success and on errors', async () => {
      const app = await appWith({});
      for (const [url, headers] of [
        ['/api/v1/contacts', bearer(key)],
        ['/api/v1/contacts', {}],
        ['/nowhere', {}],
      ] as const) {
        const response = await app.inject({ method: 'GET', url, headers: { ...headers, 'x-request-id': 'edge-42.a_b' } });
        expect(response.headers['x-request-id']).toBe('edge-42.a_b');
      }
    });

    it.each([
      ['missing', undefined],
      ['with a space', 'a b'],
      ['with a newline-like escape', 'a%0Ab'],
      ['65 characters long', 'x'.repeat(65)],
      ['shaped like an API key', 'cnt_live_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAbcdefg'],
      ['a key’s secret without its prefix', 'qnqu01qrUljTBWzJSroCwENwgvoLgS3XXeQ6'],
      ['an OAuth access token (43 characters of base64url)', 'Xk3_pQ9-ZrT2vBn8LmW4yHs6JdC1aFgE0uIoPqRsTuV'],
      ['empty', ''],
    ])('replaces an id that is %s with a generated UUID', async (_name, offered) => {
      const app = await appWith({});
      const headers = offered === undefined ? {} : { 'x-request-id': offered };
      const response = await app.inject({ method: 'GET', url: '/healthz', headers });
      expect(response.headers['x-request-id']).toMatch(UUID);
    });

    it.each(['0b6f2c3e-8a1d-4f5e-9c7b-2d4e6f8a0b1c', '4bf92f3577b34da6a3ce929d0e0e4736', 'edge-lb-01.req-000042'])(
      'keeps %s, a UUID, a W3C trace id or a plain token, unchanged',
      async (offered) => {
        const app = await appWith({});
        const response = await app.inject({ method: 'GET', url: '/healthz', headers: { 'x-request-id': offered } });
        expect(response.headers['x-request-id']).toBe(offered);
      },
    );

    it('logs each request under its id', async () => {
      const logs = captureLogs('info');
      const app = await appWith({ logger: logs.logger });
      await app.inject({ method: 'GET', url: '/healthz', headers: { 'x-request-id': 'trace-me-1' } });
      const lines = logs.lines().filter((line) => line.reqId === 'trace-me-1');
      expect(lines.map((line) => line.msg)).toEqual(['request completed']);
    });
  });

  describe('TRUST_PROXY', () => {
    const loggedAddress = async (trustProxy: boolean | readonly string[]) => {
      const logs = captureLogs('info');
      const app = await appWith({ logger: logs.logger, config: { trustProxy } });
      await app.inject({ method: 'GET', url: '/healthz', remoteAddress: '10.0.0.1', headers: { 'x-forwarded-for': '203.0.113.7' } });
      return logs.lines().find((line) => line.msg === 'request completed')?.req.remoteAddress;
    };

    it('ignores X-Forwarded-For by default', async () => {
      expect(await loggedAddress(false)).toBe('10.0.0.1');
    });

    it('believes X-Forwarded-For only from the configured proxies', async () => {
      expect(await loggedAddress(['10.0.0.0/8'])).toBe('203.0.113.7');
      expect(await loggedAddress(['192.168.0.1'])).toBe('10.0.0.1');
    });
  });

  describe('request timeout', () => {
    it('answers a request still running after REQUEST_TIMEOUT_MS with a JSON 503', async () => {
      let release: () => void = () => undefined;
      const released = new Promise<void>((resolve) => (release = resolve));
      const slow = overrideStore(store, {
        contacts: {
          listPage: async (ownerId, page) => {
            await released;
            return store.contacts.listPage(ownerId, page);
          },
          listPageJson: async (ownerId, page) => {
            await released;
            return store.contacts.listPageJson(ownerId, page);
          },
        },
      });
      const app = await buildTestApp(slow, { config: { requestTimeoutMs: 200 } });
      apps.push(app);
      const response = await listContacts(app, key);
      release();
      expect(response.statusCode).toBe(503);
      expect(response.json()).toEqual({ error: 'Request timed out' });
    });
  });
});
