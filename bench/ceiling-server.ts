/**
 * The transport ceiling: node:http answering every request with the same precomputed page bytes; with
 * ENCODING=br, the page compressed once as the service compresses a hot page (Brotli 5).
 * Usage: PORT=… PAGE_FILE=… [ENCODING=br] tsx bench/ceiling-server.ts
 */
import { readFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { brotliCompressSync, constants } from 'node:zlib';

const page = readFileSync(process.env.PAGE_FILE!);
const compressed = process.env.ENCODING === 'br';
const body = compressed
  ? brotliCompressSync(page, { params: { [constants.BROTLI_PARAM_QUALITY]: 5, [constants.BROTLI_PARAM_SIZE_HINT]: page.length } })
  : page;
const headers = {
  'content-type': 'application/json; charset=utf-8',
  'content-length': String(body.length),
  'cache-control': 'no-store',
  ...(compressed ? { 'content-encoding': 'br', vary: 'Accept-Encoding' } : {}),
};
createServer((_request, response) => {
  response.writeHead(200, headers);
  response.end(body);
}).listen(Number(process.env.PORT), '127.0.0.1', () => process.stdout.write('ready\n'));
