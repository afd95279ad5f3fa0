import type { FastifyInstance } from 'fastify';
import { chromium, type Browser, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DOCS_CONTENT_SECURITY_POLICY } from '../../src/http/routes/docs.js';
import { buildTestApp } from '../support/app.js';
import { createTestDatabase } from '../support/backends.js';
import { CHROMIUM, CHROMIUM_ARGS, skipBrowser } from '../support/chromium.js';
import { listenOnFreePort } from '../support/listen.js';

const SCREENSHOT = '/tmp/contacts-api-docs.png';

describe('GET /docs', () => {
  let app: FastifyInstance;
  let dispose: () => Promise<void>;

  beforeAll(async () => {
    const created = await createTestDatabase('sqlite', null);
    dispose = created.dispose;
    app = await buildTestApp(created.database.store);
  });
  afterAll(async () => {
    await app?.close();
    await dispose?.();
  });

  it('serves an HTML page that loads the OpenAPI document with the bundled renderer, no CDN and no inline script', async () => {
    const response = await app.inject({ method: 'GET', url: '/docs' });
    expect(response.statusCode).toBe(200);
    expect(response.headers['content-type']).toBe('text/html; charset=utf-8');
    expect(response.body).toContain('spec-url="/api/v1/openapi.json"');
    const scripts = [...response.body.matchAll(/<script([^>]*)>([\s\S]*?)<\/script>/g)];
    expect(scripts).toHaveLength(1);
    expect(scripts[0]![1]).toMatch(/^ src="\/docs\/redoc-\d+\.\d+\.\d+\.standalone\.js"$/);
    expect(scripts[0]![2]).toBe('');
    expect(response.body).not.toMatch(/https?:\/\//);
  });

  it('sends its own Content-Security-Policy: own scripts only, inline styles for the renderer, no framing', async () => {
    const response = await app.inject({ method: 'GET', url: '/docs' });
    expect(response.headers['content-security-policy']).toBe(DOCS_CONTENT_SECURITY_POLICY);
    expect(DOCS_CONTENT_SECURITY_POLICY).toContain("script-src 'self'");
    expect(DOCS_CONTENT_SECURITY_POLICY).not.toMatch(/script-src[^;]*unsafe/);
    expect(DOCS_CONTENT_SECURITY_POLICY).toContain("frame-ancestors 'none'");
  });

  it('serves the renderer bundle as JavaScript, cacheable for a year under its versioned URL', async () => {
    const page = await app.inject({ method: 'GET', url: '/docs' });
    const src = /<script src="([^"]+)">/.exec(page.body)![1]!;
    const response = await app.inject({ method: 'GET', url: src });
    expect(response.statusCode).toBe(200);
    expect(response.headers['content-type']).toBe('text/javascript; charset=utf-8');
    expect(response.headers['cache-control']).toBe('public, max-age=31536000, immutable');
    expect(response.rawPayload.length).toBeGreaterThan(100_000);
    expect((await app.inject({ method: 'HEAD', url: src })).statusCode).toBe(200);
  });

  it('is not an API operation: the OpenAPI document does not list it', async () => {
    const document = (await app.inject({ method: 'GET', url: '/api/v1/openapi.json' })).json();
    expect(Object.keys(document.paths).filter((path) => path.startsWith('/docs'))).toEqual([]);
  });
});

describe.runIf(!skipBrowser('/docs browser test'))('GET /docs in headless Chromium', () => {
  let app: FastifyInstance;
  let dispose: () => Promise<void>;
  let browser: Browser;
  let page: Page;
  let origin: string;
  const answeredBy: string[] = [];
  const blocked: string[] = [];
  const consoleErrors: string[] = [];

  beforeAll(async () => {
    const created = await createTestDatabase('sqlite', null);
    dispose = created.dispose;
    app = await buildTestApp(created.database.store);
    ({ origin } = await listenOnFreePort(app));
    browser = await chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS });
    page = await browser.newPage({ viewport: { width: 1400, height: 1000 } });
    page.on('response', (response) => answeredBy.push(response.url()));
    page.on('requestfailed', (request) => blocked.push(request.url()));
    page.on('console', (message) => {
      if (message.type() === 'error') consoleErrors.push(message.text());
    });
    await page.goto(`${origin}/docs`);
    await page.locator('h2', { hasText: 'List the contacts in your network' }).first().waitFor({ timeout: 20_000 });
  });
  afterAll(async () => {
    await browser?.close();
    await app?.close();
    await dispose?.();
  });

  it('renders the listContacts operation on /api/v1/contacts', async () => {
    await expect(page.locator('[id="operation/listContacts"]').count()).resolves.toBe(1);
    const operation = page.locator('[id="operation/listContacts"]');
    await expect(operation.innerText()).resolves.toMatch(/\/api\/v1\/contacts/);
  });

  it('shows the bearer authentication scheme and the key format', async () => {
    const text = await page.locator('body').innerText();
    expect(text).toMatch(/HTTP Authorization Scheme:?\s*bearer/i);
    expect(text).toMatch(/Bearer format:?\s*cnt_live_<secret>/i);
    expect(text).toMatch(/Authorizations:?\s*bearerAuth/i);
  });

  it('shows every documented response of listContacts, errors included, and expands one on click', async () => {
    const operation = page.locator('[id="operation/listContacts"]');
    const text = await operation.innerText();
    for (const status of ['200', '400', '401', '403', '500']) expect(text).toMatch(new RegExp(`\\b${status}\\b`));
    expect(text).toContain('Invalid or inactive API key');

    const unauthorized = operation.locator('button', { hasText: 'Invalid or inactive API key' });
    await unauthorized.click();
    await expect(unauthorized.getAttribute('aria-expanded')).resolves.toBe('true');
    const expanded = await unauthorized.locator('..').innerText();
    expect(expanded).toContain('WWW-Authenticate');
    expect(expanded).toMatch(/RESPONSE SCHEMA: application\/json\s+error\s+required\s+string/i);
  });

  it('loads everything from this server: nothing else is fetched, and the page raises no script error', async () => {
    await page.locator('[id="operation/listContacts"]').scrollIntoViewIfNeeded();
    await page.screenshot({ path: SCREENSHOT });
    expect(answeredBy).toContain(`${origin}/api/v1/openapi.json`);
    expect(answeredBy.filter((url) => !url.startsWith(`${origin}/`) && !url.startsWith('blob:') && !url.startsWith('data:'))).toEqual([]);
    // Redoc's sidebar credit links a logo on its CDN; the page's policy refuses it, and that is the only refusal.
    const creditLogo = 'https://cdn.redoc.ly/redoc/logo-mini.svg';
    expect(blocked.filter((url) => url !== creditLogo)).toEqual([]);
    expect(consoleErrors.filter((text) => !text.includes(creditLogo))).toEqual([]);
  });
});
