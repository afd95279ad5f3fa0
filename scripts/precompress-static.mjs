// Compresses the static assets the server sends (the docs page's Redoc bundle) at build time, at the highest levels:
// Brotli 11 takes about 2 s for the 1.1 MB bundle, too long for start-up. The server reads them from dist/static.
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { basename } from 'node:path';
import { brotliCompressSync, constants, gzipSync } from 'node:zlib';

const bundle = createRequire(import.meta.url).resolve('redoc/bundles/redoc.standalone.js');
const out = new URL('../dist/static/', import.meta.url);
mkdirSync(out, { recursive: true });
const bytes = readFileSync(bundle);
writeFileSync(new URL(`${basename(bundle)}.br`, out), brotliCompressSync(bytes, { params: { [constants.BROTLI_PARAM_QUALITY]: 11 } }));
writeFileSync(new URL(`${basename(bundle)}.gz`, out), gzipSync(bytes, { level: 9 }));
