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
  // What the address book speaks and that it only reads, asked before any credentials (docs/carddav.md).
  'OPTIONS /dav',
]);
/**
 * Also public: the docs page's script bundle (named after its version), OAuth discovery documents, and the embedded
 * authorization server (it is where a client gets a token).
 */
const isPublic = (route: string) =>
  PUBLIC_ROUTES.has(route) || /^(GET|HEAD) \/docs\/[\w.-]+\.js$/.test(route) || /^[A-Z]+ \/(\.well-known|oauth)\//.test(route);
/**
 * What a 401 without a key tells the client to do: send a key (REST), or start OAuth discovery (/mcp, MCP
 * authorization; no error code, RFC 6750 §3.1).
 */
const challengeOf = (route: string) => {
  if (route === 'POST /mcp')
    return 'Bearer resource_metadata="http://127.0.0.1:3000/.well-known/oauth-protected-resource/mcp", scope="contacts:read"';
  // The address book (PROPFIND / is its discovery's first step) asks for Basic, as address book clients expect.
  return route === 'PROPFIND /' || / \/dav(\/|$)/.test(route) ? 'Basic realm="Contacts"' : 'Bearer realm="contacts-api"';
};
/** Public GET routes that answer other than 200: the address book's well-known URI redirects (RFC 6764). */
const REDIRECTS = new Set(['GET /.well-known/carddav']);

/**
 * The routes Fastify has, read from its route tree (a child line adds to its parent's path): `METHOD /path` each. A
 * wildcard is printed as a bare `*` whatever its prefix (`/oauth/*`), so wildcard routes are left out.
 */
function routesOf(app: FastifyInstance): string[] {
  const parents: string[] = [];
  return app
    .printRoutes({ commonPrefix: false })
    .split('\n')
    .flatMap((line) => {
      const match = /^([│ ]*)[├└]── (\S+)(?: \(([A-Z, ]+)\))?/.exec(line);
      if (!match || match[2]!.startsWith('*')) return [];
      const depth = match[1]!.length / 4;
      const parent = parents[depth - 1] ?? '';
      // Under a root route (`/`), the children are printed without their leading slash.
      const path = parent.endsWith('/') || match[2]!.startsWith('/') ? parent + match[2]! : `${parent}/${match[2]!}`;
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
    expect(guarded).toEqual(expect.arrayContaining(['GET /api/v1/contacts', 'POST /mcp', 'PROPFIND /', 'PROPFIND /dav', 'REPORT /dav']));
    for (const route of guarded) {
      const [method, url] = route.split(' ') as [string, string];
      const response = await app.inject({
        method: method as 'GET',
        url,
        headers: { 'content-type': 'application/json' },
        payload: method === 'GET' || method === 'HEAD' ? undefined : '{not json',
      });
      expect({ route, status: response.statusCode }).toEqual({ route, status: 401 });
      expect(response.headers['www-authenticate'], route).toBe(challengeOf(route));
    }
  });

  it('serves the public routes without a key', async () => {
    // The authorization server's own paths need parameters (a client, an interaction): test/mcp/mcp-oauth.test.ts.
    const present = routesOf(app).filter((route) => isPublic(route) && route.startsWith('GET') && !route.includes('/oauth/'));
    expect(present).toHaveLength(10);
    for (const route of present) {
      const response = await app.inject({ method: 'GET', url: route.slice('GET '.length) });
      expect({ route, status: response.statusCode }).toEqual({ route, status: REDIRECTS.has(route) ? 301 : 200 });
    }
  });
});
