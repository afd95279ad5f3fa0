import type { FastifyInstance, InjectOptions } from 'fastify';
import { createAuthenticator } from '../../src/auth/authenticator.js';
import { loadConfig } from '../../src/config.js';
import { buildApp, type AppConfig, type AppDependencies } from '../../src/app.js';
import { createMetrics } from '../../src/metrics/metrics.js';
import type { Store } from '../../src/store/store.js';
import { openApiResponseChecker, type OpenApiDocument } from './openapi-responses.js';
import { TEST_KEY_PREFIX } from './seed.js';

/** Settings that differ from the tests' defaults; a group (rateLimit, metrics, oauth, openApi) is merged into its defaults. */
export type ConfigOverrides = {
  [Name in keyof AppConfig]?: IsGroup<AppConfig[Name]> extends true ? Partial<AppConfig[Name]> : AppConfig[Name];
};
type IsGroup<Value> = Value extends readonly unknown[] ? false : Value extends object ? true : false;

export interface TestAppOptions extends Partial<Omit<AppDependencies, 'store' | 'config'>> {
  config?: ConfigOverrides;
}

/** The configuration's defaults (an empty environment), with the tests' key prefix and no rate limit. */
const TEST_CONFIG: AppConfig = (() => {
  const defaults = loadConfig({});
  const noLimits = { perMinute: 0, authFailuresPerMinute: 0, oauthRegistrationsPerMinute: 0, oauthAuthorizationsPerMinute: 0 };
  return { ...defaults, apiKeyPrefix: TEST_KEY_PREFIX, rateLimit: { ...defaults.rateLimit, ...noLimits } };
})();

/**
 * The real app on `store`, without logs or rate limit unless `options` says so (a rate limit needs its
 * `requestCounter`). Every answer a test gets through `inject` on a documented path is checked against the OpenAPI
 * document the app serves: a status, header or body the document does not declare fails the test that produced it.
 */
export async function buildTestApp(store: Store, options: TestAppOptions = {}): Promise<FastifyInstance> {
  const { config = {}, ...dependencies } = options;
  const app = await buildApp({
    store,
    authenticator: createAuthenticator({ keys: store.keys, apiKeyPrefix: TEST_KEY_PREFIX }),
    logger: false,
    metrics: createMetrics({ poolStats: store.poolStats?.bind(store) }),
    requestCounter: null,
    ...dependencies,
    config: withOverrides(TEST_CONFIG, config),
  });
  return checkedAgainstItsDocument(app);
}

function withOverrides(defaults: AppConfig, overrides: ConfigOverrides): AppConfig {
  const isGroup = (value: unknown): value is object => typeof value === 'object' && value !== null && !Array.isArray(value);
  const merged: Record<string, unknown> = { ...defaults };
  for (const [name, value] of Object.entries(overrides)) {
    merged[name] = isGroup(merged[name]) && isGroup(value) ? { ...merged[name], ...value } : value;
  }
  return merged as AppConfig;
}

function checkedAgainstItsDocument(app: FastifyInstance): FastifyInstance {
  const original = app.inject.bind(app) as (...args: unknown[]) => unknown;
  const inject = original as (options: InjectOptions | string) => Promise<Awaited<ReturnType<FastifyInstance['inject']>>>;
  // What GET /api/v1/openapi.json serves, taken without a request, so that no test sees one it did not make.
  const document = JSON.parse(JSON.stringify(app.swagger())) as OpenApiDocument;
  const check = openApiResponseChecker(document);
  const checked = async (options: InjectOptions | string) => {
    const response = await inject(options);
    const { method = 'GET', url = '/' } = typeof options === 'string' ? { url: options } : options;
    const target = typeof url === 'string' ? url : String(url.pathname ?? '/');
    if (target.split('?', 1)[0]! in document.paths) {
      const exchange = { method, url: target, status: response.statusCode, headers: response.headers, body: response.rawPayload };
      const problems = check(exchange);
      if (problems.length > 0) throw new Error(`The answer disagrees with the served OpenAPI document:\n${problems.join('\n')}`);
    }
    return response;
  };
  // Only `inject(options)` is checked; the chainable and callback forms are passed through as they are.
  app.inject = ((...args: unknown[]) =>
    args.length === 1 && args[0] !== undefined
      ? checked(args[0] as InjectOptions | string)
      : original(...args)) as FastifyInstance['inject'];
  return app;
}

export function bearer(key: string): { authorization: string } {
  return { authorization: `Bearer ${key}` };
}
