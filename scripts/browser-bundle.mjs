// One script for a browser page, its imports included, bundled by Vite: the contact cards' view at build time
// (build-contact-cards.mjs), the test host page of the cards at test time (test/mcp/mcp-cards.test.ts).
import { dirname } from 'node:path';
import { build } from 'vite';

/** The minified script of `entry` (a path), as an IIFE; safe to put inside a <script> element. */
export async function bundleForBrowser(entry) {
  const output = await build({
    configFile: false,
    envFile: false,
    publicDir: false,
    logLevel: 'warn',
    root: dirname(entry),
    build: {
      write: false,
      minify: true,
      target: 'es2022',
      // zod's annotations that Rollup cannot place are only dropped, not misread.
      rollupOptions: { onwarn: (warning, warn) => warning.code === 'INVALID_ANNOTATION' || warn(warning) },
      lib: { entry, formats: ['iife'], name: 'bundle' },
    },
  });
  const [chunk, ...others] = (Array.isArray(output) ? output : [output]).flatMap((result) => result.output);
  if (chunk?.type !== 'chunk' || others.length > 0) throw new Error(`${entry} did not bundle into one script.`);
  // A script element ends at the first "</script", wherever it stands.
  return chunk.code.replaceAll('</script', '<\\/script');
}
