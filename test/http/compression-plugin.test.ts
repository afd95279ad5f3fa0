import { brotliDecompressSync, gunzipSync, gzipSync } from 'node:zlib';
import Fastify, { type FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MIN_COMPRESSED_BYTES } from '../../src/web/content-coding.js';
import compression from '../../src/web/plugins/compression.js';
import { sendJson } from '../../src/http/send-json.js';

/** JSON of exactly `bytes` bytes. */
const jsonOf = (bytes: number) => JSON.stringify({ text: 'x'.repeat(bytes - '{"text":""}'.length) });

describe('the compression plugin', () => {
  let app: FastifyInstance;
  const big = jsonOf(20_000);

  beforeAll(async () => {
    app = Fastify();
    await app.register(compression);
    const compressed = { config: { compress: true } };
    app.get('/big', compressed, async (_request, reply) => sendJson(reply, big));
    app.get('/big-buffer', compressed, async (_request, reply) => sendJson(reply, Buffer.from(big)));
    app.get('/object', compressed, async () => ({ text: 'x'.repeat(5_000) }));
    app.get('/sized/:bytes', compressed, async (request, reply) =>
      sendJson(reply, jsonOf(Number((request.params as { bytes: string }).bytes))),
    );
    app.get('/tagged', compressed, async (request, reply) => {
      if (request.headers['if-none-match'] === '"v1"') return reply.code(304).header('etag', '"v1"').send();
      return sendJson(reply.header('etag', '"v1"'), big);
    });
    app.get('/failing', compressed, async () => {
      throw new Error('failed');
    });
    app.get('/coded', compressed, async (_request, reply) => reply.header('content-encoding', 'gzip').send(gzipSync(big)));
    app.get('/varies-on-origin', compressed, async (_request, reply) => sendJson(reply.header('vary', 'Origin'), big));
    app.get('/plain', async (_request, reply) => sendJson(reply, big));
    await app.ready();
  });
  afterAll(async () => {
    await app.close();
  });

  const get = (url: string, acceptEncoding?: string, headers: Record<string, string> = {}) =>
    app.inject({
      method: 'GET',
      url,
      headers: { ...(acceptEncoding === undefined ? {} : { 'accept-encoding': acceptEncoding }), ...headers },
    });

  it.each([
    ['gzip, br', 'br'],
    ['br, gzip', 'br'],
    ['gzip;q=1, br;q=0.5', 'br'],
    ['*', 'br'],
    ['gzip', 'gzip'],
    ['br;q=0, gzip', 'gzip'],
    ['br', 'br'],
  ] as const)('with Accept-Encoding %j, sends a body of 1 KB or more in %s, Brotli first', async (header, coding) => {
    const response = await get('/big', header);
    expect(response.headers['content-encoding']).toBe(coding);
    expect(response.headers.vary).toBe('Accept-Encoding');
    expect(Number(response.headers['content-length'])).toBe(response.rawPayload.length);
    const decode = coding === 'br' ? brotliDecompressSync : gunzipSync;
    expect(decode(response.rawPayload).toString()).toBe(big);
  });

  it.each([undefined, '', 'identity', 'identity;q=0', 'deflate', 'x-gzip', 'gzip;q=0, br;q=0'])(
    'with Accept-Encoding %j, sends the body as it is, still saying Vary: Accept-Encoding',
    async (header) => {
      const response = await get('/big', header);
      expect(response.headers['content-encoding']).toBeUndefined();
      expect(response.headers.vary).toBe('Accept-Encoding');
      expect(response.body).toBe(big);
    },
  );

  it('compresses a Buffer and an object Fastify serializes as it compresses a string', async () => {
    expect(brotliDecompressSync((await get('/big-buffer', 'br')).rawPayload).toString()).toBe(big);
    const object = await get('/object', 'gzip');
    expect(object.headers['content-encoding']).toBe('gzip');
    expect(JSON.parse(gunzipSync(object.rawPayload).toString())).toEqual({ text: 'x'.repeat(5_000) });
  });

  it(`sends a body under ${MIN_COMPRESSED_BYTES} bytes as it is, and compresses one of ${MIN_COMPRESSED_BYTES}`, async () => {
    const under = await get(`/sized/${MIN_COMPRESSED_BYTES - 1}`, 'gzip, br');
    expect(under.headers['content-encoding']).toBeUndefined();
    expect(under.headers.vary).toBe('Accept-Encoding');
    expect(under.rawPayload.length).toBe(MIN_COMPRESSED_BYTES - 1);
    expect((await get(`/sized/${MIN_COMPRESSED_BYTES}`, 'gzip, br')).headers['content-encoding']).toBe('br');
  });

  it('answers 304 without a body, saying Vary: Accept-Encoding as the 200 does', async () => {
    const response = await get('/tagged', 'gzip, br', { 'if-none-match': '"v1"' });
    expect(response.statusCode).toBe(304);
    expect(response.headers['content-encoding']).toBeUndefined();
    expect(response.headers.vary).toBe('Accept-Encoding');
    expect(response.rawPayload.length).toBe(0);
  });

  it('compresses nothing for HEAD: the length said is the body’s as it is', async () => {
    const response = await app.inject({ method: 'HEAD', url: '/big', headers: { 'accept-encoding': 'gzip, br' } });
    expect(response.statusCode).toBe(200);
    expect(response.headers['content-encoding']).toBeUndefined();
    expect(response.headers['content-length']).toBe(String(big.length));
    expect(response.headers.vary).toBe('Accept-Encoding');
  });

  it('says Vary: Accept-Encoding on an error too, beside a Vary already set', async () => {
    const failing = await get('/failing', 'gzip');
    expect(failing.statusCode).toBe(500);
    expect(failing.headers.vary).toBe('Accept-Encoding');
    expect((await get('/varies-on-origin', 'gzip')).headers.vary).toBe('Origin, Accept-Encoding');
  });

  it('leaves a body already coded, and the routes that do not ask, as they are', async () => {
    const coded = await get('/coded', 'br');
    expect(coded.headers['content-encoding']).toBe('gzip');
    expect(gunzipSync(coded.rawPayload).toString()).toBe(big);
    const plain = await get('/plain', 'gzip, br');
    expect(plain.headers['content-encoding']).toBeUndefined();
    expect(plain.headers.vary).toBeUndefined();
  });
});
