/**
 * The transport ceiling: node:http answering every request with the same saved bytes. The bench saves the bytes the
 * service itself sends for its hot first page: as they are, in gzip and in Brotli (ENCODING names the coding of the
 * file, sent as its Content-Encoding).
 * Usage: PORT=… PAGE_FILE=… [ENCODING=gzip|br] tsx bench/ceiling-server.ts
 */
import { readFileSync } from 'node:fs';
import { createServer } from 'node:http';

const body = readFileSync(process.env.PAGE_FILE!);
const encoding = process.env.ENCODING;
const headers = {
  'content-type': 'application/json; charset=utf-8',
  'content-length': String(body.length),
  'cache-control': 'no-store',
  ...(encoding ? { 'content-encoding': encoding, vary: 'Accept-Encoding' } : {}),
};
createServer((_request, response) => {
  response.writeHead(200, headers);
  response.end(body);
}).listen(Number(process.env.PORT), '127.0.0.1', () => process.stdout.write('ready\n'));
