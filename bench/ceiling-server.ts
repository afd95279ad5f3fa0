/**
 * The transport ceiling: node:http answering every request with the same precomputed page bytes.
 * Usage: PORT=… PAGE_FILE=… tsx bench/ceiling-server.ts
 */
import { readFileSync } from 'node:fs';
import { createServer } from 'node:http';

const body = readFileSync(process.env.PAGE_FILE!);
const headers = { 'content-type': 'application/json; charset=utf-8', 'content-length': String(body.length), 'cache-control': 'no-store' };
createServer((_request, response) => {
  response.writeHead(200, headers);
  response.end(body);
}).listen(Number(process.env.PORT), '127.0.0.1', () => process.stdout.write('ready\n'));
