import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import type { FastifyInstance } from 'fastify';
import { contentEtag, sendWithEtag } from '../conditional.js';
import { OPENAPI_PATH } from './openapi.js';

export const DOCS_PATH = '/docs';

/** Redoc's self-contained browser bundle, shipped in its npm package: the page loads nothing from a CDN. */
function redocBundle(): { file: string; path: string } {
  const file = createRequire(import.meta.url).resolve('redoc/bundles/redoc.standalone.js');
  const { version } = JSON.parse(readFileSync(join(dirname(file), '..', 'package.json'), 'utf8')) as { version: string };
  // The URL names the version, so browsers may keep the bundle for a year: an upgrade changes the URL.
  return { file, path: `${DOCS_PATH}/redoc-${version}.standalone.js` };
}

/**
 * The page runs only our own script, with no inline code. Redoc injects its styles at run time
 * (`style-src 'unsafe-inline'`) and runs its search index in a worker made from a blob: URL. Images
 * come only from here: the one remote reference in Redoc, its sidebar credit logo, is blocked.
 */
export const DOCS_CONTENT_SECURITY_POLICY = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self' 'unsafe-inline'",
  "img-src 'self' data:",
  "font-src 'self' data:",
  "connect-src 'self'",
  'worker-src blob:',
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join('; ');

function page(scriptPath: string): string {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Contacts Read API reference</title>
<link rel="icon" href="data:,">
<style>body { margin: 0; padding: 0; }</style>
</head>
<body>
<redoc spec-url="${OPENAPI_PATH}" required-props-first="true" hide-hostname="true"></redoc>
<script src="${scriptPath}"></script>
</body>
</html>
`;
}

/** `GET /docs`: the OpenAPI document as an interactive reference (Redoc), and the renderer's bundle. */
export function registerDocsRoutes(app: FastifyInstance): void {
  const bundle = redocBundle();
  const html = page(bundle.path);
  const htmlEtag = contentEtag(html);
  const script = readFileSync(bundle.file);
  const scriptEtag = contentEtag(script);
  const config = { contentSecurityPolicy: DOCS_CONTENT_SECURITY_POLICY };
  app.get(DOCS_PATH, { schema: { hide: true }, config }, async (request, reply) => {
    reply.header('cache-control', 'no-cache').type('text/html; charset=utf-8');
    return sendWithEtag(request, reply, html, htmlEtag);
  });
  app.get(bundle.path, { schema: { hide: true }, config }, async (request, reply) => {
    reply.header('cache-control', 'public, max-age=31536000, immutable').type('text/javascript; charset=utf-8');
    return sendWithEtag(request, reply, script, scriptEtag);
  });
}
