import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { bearer, buildTestApp } from '../support/app.js';
import { describeEachBackend } from '../support/backends.js';
import { listenOnFreePort } from '../support/listen.js';
import { rawRequest } from '../support/raw-http.js';
import { createKey, createUser } from '../support/seed.js';

async function raw(port: number, request: string): Promise<{ status: number; headers: string; body: string }> {
  const answer = await rawRequest(port, request);
  const headers = Object.entries(answer.headers).map(([name, value]) => `${name}: ${value}`);
  return {
    status: answer.status,
    headers: [`http/1.1 ${answer.status}`, ...headers].join('\n').toLowerCase(),
    body: answer.body.toString(),
  };
}

describeEachBackend('the Host header (RFC 9112 §3.2)', (db) => {
  let app: FastifyInstance;
  let port: number;
  let key: string;
  beforeAll(async () => {
    const { store } = db();
    key = (await createKey(store, (await createUser(store)).id)).key;
    app = await buildTestApp(store);
    ({ port } = await listenOnFreePort(app));
  });
  afterAll(async () => {
    await app.close();
  });

  it('answers an HTTP/1.1 request without Host with a JSON 400 carrying the usual headers', async () => {
    const answer = await raw(
      port,
      `GET /api/v1/contacts HTTP/1.1\r\nAuthorization: ${bearer(key).authorization}\r\nConnection: close\r\n\r\n`,
    );
    expect(answer.status).toBe(400);
    expect(answer.headers).toContain('content-type: application/json');
    expect(answer.headers).toContain('x-content-type-options: nosniff');
    expect(answer.headers).toContain('x-request-id: ');
    expect(JSON.parse(answer.body)).toEqual({ error: 'An HTTP/1.1 request must carry a Host header' });
  });

  it('answers two Host headers with a JSON 400, before the key is checked', async () => {
    const answer = await raw(port, 'GET /api/v1/contacts HTTP/1.1\r\nHost: a.example\r\nHost: b.example\r\nConnection: close\r\n\r\n');
    expect(answer.status).toBe(400);
    expect(JSON.parse(answer.body)).toEqual({ error: 'A request must carry one Host header; this one carries several' });
  });

  it('serves one Host on HTTP/1.1, and HTTP/1.0 without one', async () => {
    const auth = `Authorization: ${bearer(key).authorization}\r\n`;
    expect((await raw(port, `GET /api/v1/contacts HTTP/1.1\r\nHost: x\r\n${auth}Connection: close\r\n\r\n`)).status).toBe(200);
    const old = await raw(port, `GET /healthz HTTP/1.0\r\n\r\n`);
    expect(old.headers).toMatch(/^http\/1\.1 200/);
  });
});
