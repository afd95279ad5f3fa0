import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { buildTestApp } from '../support/app.js';
import { describeEachBackend } from '../support/backends.js';

/** Every route the app serves without a key; any other route must go through the authorization hook. */
const PUBLIC_ROUTES = new Set([
  'GET /healthz',
  'HEAD /healthz',
  'GET /readyz',
  'HEAD /readyz',
  'GET /api/v1/openapi.json',
  'HEAD /api/v1/openapi.json',
  'GET /docs',
  'HEAD /docs',
]);
/** The docs page's script bundle, named after its version. */
const isPublic = (route: string) => PUBLIC_ROUTES.has(route) || /^(GET|HEAD) \/docs\/[\w.-]+\.js$/.test(route);

/** The routes Fastify has, read from its route tree (a child line adds to its parent's path): `METHOD /path` each. */
function routesOf(app: FastifyInstance): string[] {
  const parents: string[] = [];
  return app
    .printRoutes({ commonPrefix: false })
    .split('\n')
    .flatMap((line) => {
      const match = /^([│ ]*)[├└]── (\/\S*)(?: \(([A-Z, ]+)\))?/.exec(line);
      if (!match) return [];
      const depth = match[1]!.length / 4;
      const path = (parents[depth - 1] ?? '') + match[2]!;
      parents[depth] = path;
      return (match[3]?.split(', ') ?? []).map((method) => `${method} ${path}`);
    });
}

describeEachBackend('one authorization hook for every contact route', (db) => {
  let app: FastifyInstance;
  beforeAll(async () => {
    app = await buildTestApp(db().store);
  });
  afterAll(async () => {
    await app.close();
  });

  it('answers 401 without a key on every route that is not public, before reading a body', async () => {
    const guarded = routesOf(app).filter((route) => !isPublic(route));
    expect(guarded).toEqual(expect.arrayContaining(['GET /api/v1/contacts', 'POST /mcp']));
    for (const route of guarded) {
      const [method, url] = route.split(' ') as [string, string];
      const response = await app.inject({
        method: method as 'GET',
        url,
        headers: { 'content-type': 'application/json' },
        payload: method === 'GET' || method === 'HEAD' ? undefined : '{not json',
      });
      expect({ route, status: response.statusCode }).toEqual({ route, status: 401 });
      expect(response.headers['www-authenticate'], route).toBe('Bearer realm="contacts-api"');
    }
  });

  it('serves the public routes without a key', async () => {
    const present = routesOf(app).filter((route) => isPublic(route) && route.startsWith('GET'));
    expect(present).toHaveLength(5);
    for (const route of present) {
      const response = await app.inject({ method: 'GET', url: route.slice('GET '.length) });
      expect({ route, status: response.statusCode }).toEqual({ route, status: 200 });
    }
  });
});
