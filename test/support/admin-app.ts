import type { AddressInfo } from 'node:net';
import type { FastifyBaseLogger, FastifyInstance } from 'fastify';
import { buildAdminApp, type AdminAppConfig } from '../../src/admin/app.js';
import { loadConfig } from '../../src/config.js';
import { createMetrics } from '../../src/metrics/metrics.js';
import type { Store } from '../../src/store/store.js';
import { openApiResponseChecker, type Exchange, type OpenApiDocument } from './openapi-responses.js';
import { TEST_KEY_PREFIX } from './seed.js';

/** The admin token of the tests' admin apps: 40 visible characters. */
export const TEST_ADMIN_TOKEN = 'test-admin-token-0123456789-abcdefghijkl';

export interface AdminAnswer {
  status: number;
  headers: Headers;
  text: string;
  /** The body as JSON, or undefined when it is empty. */
  json: any;
}

export interface AdminRequest {
  /** A JSON value, sent as `application/json`; or bytes sent with `headers` as they are. */
  body?: unknown;
  raw?: Uint8Array | string;
  headers?: Record<string, string>;
  /** The Bearer token; the tests' admin token unless given (null: no Authorization header). */
  token?: string | null;
}

export interface AdminTestServer {
  app: FastifyInstance;
  url: string;
  port: number;
  document: OpenApiDocument;
  /** Sends a request over a real socket; every answer is checked against the served admin document. */
  request(method: string, path: string, request?: AdminRequest): Promise<AdminAnswer>;
  close(): Promise<void>;
}

const defaults = loadConfig({});

/** The admin app on `store`, listening on a free port of 127.0.0.1, as `serve` builds it (without logs unless given). */
export async function startAdminApp(
  store: Store,
  options: {
    logger?: FastifyBaseLogger | false;
    config?: Partial<Omit<AdminAppConfig, 'admin'>> & { admin?: Partial<AdminAppConfig['admin']> };
  } = {},
): Promise<AdminTestServer> {
  const config: AdminAppConfig = {
    ...defaults,
    apiKeyPrefix: TEST_KEY_PREFIX,
    ...options.config,
    admin: { ...defaults.admin, token: TEST_ADMIN_TOKEN, ...options.config?.admin },
  };
  const app = await buildAdminApp({ config, store, logger: options.logger ?? false, metrics: createMetrics({}) });
  await app.listen({ host: '127.0.0.1', port: 0 });
  const port = (app.server.address() as AddressInfo).port;
  const url = `http://127.0.0.1:${port}`;
  const document = JSON.parse(JSON.stringify(app.swagger())) as OpenApiDocument;
  const check = openApiResponseChecker(document);
  return {
    app,
    url,
    port,
    document,
    request: async (method, path, request = {}) => {
      const { token = TEST_ADMIN_TOKEN } = request;
      const headers: Record<string, string> = {
        connection: 'close',
        ...(token === null ? {} : { authorization: `Bearer ${token}` }),
        ...(request.body === undefined ? {} : { 'content-type': 'application/json' }),
        ...request.headers,
      };
      const body = request.body === undefined ? request.raw : JSON.stringify(request.body);
      const response = await fetch(`${url}${path}`, { method, headers, body });
      const bytes = Buffer.from(await response.arrayBuffer());
      const exchange: Exchange = { method, url: path, status: response.status, headers: Object.fromEntries(response.headers), body: bytes };
      const problems = check(exchange);
      if (problems.length > 0) throw new Error(`The answer disagrees with the admin OpenAPI document:\n${problems.join('\n')}`);
      const text = bytes.toString('utf8');
      return { status: response.status, headers: response.headers, text, json: text === '' ? undefined : JSON.parse(text) };
    },
    close: () => app.close(),
  };
}
