import { existsSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { basename, dirname, join } from 'node:path';
import type { FastifyInstance } from 'fastify';
import { sendAsset, staticAsset, type StaticAsset } from '../static-asset.js';
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

/**
 * The bundle as `npm run build` compressed it (scripts/precompress-static.mjs, into dist/static); undefined when
 * running from the sources, where it is compressed at first use instead.
 */
function precompressed(file: string): StaticAsset['variants'] | undefined {
  const at = (coding: string) => new URL(`../../static/${basename(file)}.${coding}`, import.meta.url);
  if (!existsSync(at('br')) || !existsSync(at('gz'))) return undefined;
  return { br: readFileSync(at('br')), gzip: readFileSync(at('gz')) };
}

/** `GET /docs`: the OpenAPI document as an interactive reference (Redoc), and the renderer's bundle. */
export function registerDocsRoutes(app: FastifyInstance): void {
  const bundle = redocBundle();
  let html: Promise<StaticAsset> | undefined;
  let script: Promise<StaticAsset> | undefined;
  const config = { contentSecurityPolicy: DOCS_CONTENT_SECURITY_POLICY };
  app.get(DOCS_PATH, { schema: { hide: true }, config }, async (request, reply) => {
    html ??= staticAsset(Buffer.from(page(bundle.path)));
    reply.header('cache-control', 'no-cache').type('text/html; charset=utf-8');
    return sendAsset(request, reply, await html);
  });
  app.get(bundle.path, { schema: { hide: true }, config }, async (request, reply) => {
    script ??= staticAsset(readFileSync(bundle.file), precompressed(bundle.file));
    reply.header('cache-control', 'public, max-age=31536000, immutable').type('text/javascript; charset=utf-8');
    return sendAsset(request, reply, await script);
  });
}
