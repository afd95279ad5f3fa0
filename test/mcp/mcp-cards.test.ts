import { createHash } from 'node:crypto';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { RESOURCE_MIME_TYPE, RESOURCE_URI_META_KEY } from '@modelcontextprotocol/ext-apps';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { Client as V1Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport as V1StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { createMcpHandler, McpServer } from '@modelcontextprotocol/server';
import type { FastifyInstance } from 'fastify';
import { chromium, type Browser, type FrameLocator, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bundleForBrowser } from '../../scripts/browser-bundle.mjs';
import {
  CONTACT_CARDS_PAGE_MAX_BYTES,
  CONTACT_CARDS_TOOL_META,
  CONTACT_CARDS_URI,
  MCP_APP_MIME_TYPE,
  registerContactCards,
} from '../../src/mcp/contact-cards.js';
import { CALL_RESERVATION_BYTES } from '../../src/mcp/inflight-bytes.js';
import { MCP_RESPONSE_LIMIT_BYTES } from '../../src/mcp/route.js';
import { bearer, buildTestApp } from '../support/app.js';
import { createTestDatabase, describeEachBackend } from '../support/backends.js';
import { CHROMIUM, CHROMIUM_ARGS, skipBrowser } from '../support/chromium.js';
import { listenOnFreePort } from '../support/listen.js';
import { listContactChanges } from '../support/requests.js';
import { contactRecord, createKey, createUser } from '../support/seed.js';

/** Where the browser test puts its picture of the cards; docs/mcp.md shows the one in docs/images. */
const SCREENSHOT = process.env.CARDS_SCREENSHOT ?? join(tmpdir(), 'mcp-contact-cards.png');
const HOST_SCRIPT = fileURLToPath(new URL('./cards-host/host.mjs', import.meta.url));
const CARD_TOOLS = ['list_contacts', 'search_contacts', 'get_contact', 'list_changes'];

/** The page as a client reads it, over 2026-07-28 from a handler serving registerContactCards and one tool linking to it. */
async function cardsClient(): Promise<Client> {
  const handler = createMcpHandler(
    () => {
      const server = new McpServer({ name: 'contacts-cards-test', version: '1.0.0' });
      registerContactCards(server, (error) => expect.fail(String(error)));
      server.registerTool('list_contacts', { description: 'Lists contacts.', _meta: CONTACT_CARDS_TOOL_META }, () => ({
        content: [{ type: 'text', text: 'No contacts.' }],
      }));
      return server;
    },
    { responseMode: 'json' },
  );
  const client = new Client({ name: 'contacts-cards-test', version: '1.0.0' }, { versionNegotiation: { mode: { pin: '2026-07-28' } } });
  await client.connect(
    new StreamableHTTPClientTransport(new URL('http://contacts.test/mcp'), { fetch: (url, init) => handler.fetch(new Request(url, init)) }),
  );
  return client;
}

async function readCardsPage(client: Client): Promise<{ html: string; mimeType: string | undefined; meta: unknown }> {
  const { contents } = await client.readResource({ uri: CONTACT_CARDS_URI });
  expect(contents).toHaveLength(1);
  const [content] = contents;
  if (content === undefined || !('text' in content)) throw new Error('The cards page is not text.');
  return { html: content.text, mimeType: content.mimeType, meta: content._meta };
}

const inlineElements = (html: string, tag: string) => [...html.matchAll(new RegExp(`<${tag}([^>]*)>([\\s\\S]*?)</${tag}>`, 'g'))];
const sha256 = (text: string) => `'sha256-${createHash('sha256').update(text).digest('base64')}'`;
const NO_ORIGIN = { connectDomains: [], resourceDomains: [], frameDomains: [], baseUriDomains: [] };

describe('ui://contacts/cards.html over 2026-07-28', () => {
  let client: Client;

  beforeAll(async () => {
    client = await cardsClient();
  });
  afterAll(async () => {
    await client?.close();
  });

  it('speaks the extension’s names: its MIME type and its legacy tool key', () => {
    expect(MCP_APP_MIME_TYPE).toBe(RESOURCE_MIME_TYPE);
    expect(Object.keys(CONTACT_CARDS_TOOL_META)).toContain(RESOURCE_URI_META_KEY);
  });

  it('is listed as an MCP App page whose policy admits no outside origin', async () => {
    const { resources } = await client.listResources();
    const cards = resources.find((resource) => resource.uri === CONTACT_CARDS_URI);
    expect(cards).toMatchObject({ name: 'contact-cards', mimeType: 'text/html;profile=mcp-app', _meta: { ui: { csp: NO_ORIGIN } } });
  });

  it('links the tools to it, for the model only', async () => {
    const { tools } = await client.listTools();
    expect(tools[0]!._meta).toEqual({ ui: { resourceUri: CONTACT_CARDS_URI, visibility: ['model'] }, 'ui/resourceUri': CONTACT_CARDS_URI });
  });

  it('reads as one self-contained page: its one script and one style pinned by hash in a policy that allows nothing else', async () => {
    const { html, mimeType, meta } = await readCardsPage(client);
    expect(mimeType).toBe(RESOURCE_MIME_TYPE);
    expect(meta).toEqual({ ui: { csp: NO_ORIGIN } });
    const scripts = inlineElements(html, 'script');
    const styles = inlineElements(html, 'style');
    expect(scripts.map(([, attributes]) => attributes)).toEqual(['']);
    expect(styles.map(([, attributes]) => attributes)).toEqual(['']);
    const policy = /<meta http-equiv="Content-Security-Policy" content="([^"]+)" \/>/.exec(html)?.[1];
    expect(policy?.split('; ')).toEqual([
      "default-src 'none'",
      `script-src ${sha256(scripts[0]![2]!)}`,
      `style-src ${sha256(styles[0]![2]!)}`,
      "base-uri 'none'",
      "form-action 'none'",
    ]);
    expect(html).not.toMatch(/\b(?:src|href|action|srcset)\s*=\s*["']?\s*(?:https?:)?\/\//i);
    expect(html).not.toMatch(/<(?:link|img|iframe|object|embed|base)\b/i);
    expect(styles[0]![2]).not.toMatch(/@import|url\(/);
  });

  it('fits one /mcp response beside the largest answer of a tool call, and the size its reads reserve', async () => {
    const { html } = await readCardsPage(client);
    expect(Buffer.byteLength(JSON.stringify(html))).toBeLessThan(MCP_RESPONSE_LIMIT_BYTES - CALL_RESERVATION_BYTES);
    expect(Buffer.byteLength(html)).toBeLessThan(CONTACT_CARDS_PAGE_MAX_BYTES);
  });
});

describeEachBackend('MCP contact cards: the tools that link to them', (db) => {
  let app: FastifyInstance;
  let client: V1Client;

  beforeAll(async () => {
    const owner = await createUser(db().store, 'pro');
    const { key } = await createKey(db().store, owner.id);
    await db().store.contacts.importContacts(owner.id, [contactRecord({ name: 'Ada Lovelace', email: 'ada@example.com' })]);
    app = await buildTestApp(db().store);
    const { origin } = await listenOnFreePort(app);
    client = new V1Client({ name: 'contacts-cards-test', version: '1.0.0' });
    await client.connect(new V1StreamableHTTPClientTransport(new URL(`${origin}/mcp`), { requestInit: { headers: bearer(key) } }));
  });
  afterAll(async () => {
    await client?.close();
    await app?.close();
  });

  it('gives list_contacts, search_contacts and get_contact the link to the cards, and the other tools none', async () => {
    const { tools } = await client.listTools();
    for (const tool of tools) expect(tool._meta, tool.name).toEqual(CARD_TOOLS.includes(tool.name) ? CONTACT_CARDS_TOOL_META : undefined);
  });

  it('leaves their results as they were: the same structured result, and its JSON in the text', async () => {
    const result = (await client.callTool({ name: 'list_contacts', arguments: {} })) as CallToolResult;
    expect(Object.keys(result.structuredContent!)).toEqual(['data', 'pagination', 'truncated']);
    expect(result._meta).toBeUndefined();
    expect(JSON.parse((result.content[1] as { text: string }).text)).toEqual(result.structuredContent);
  });
});

/** The test host's page: the cards shown in the screenshot, and the others beside them. */
const HOST_PAGE = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<style>
  body { margin: 0; background: #e9e9e7; font: 13px system-ui, sans-serif; }
  main, div { padding: 4px 12px; }
  h2 { margin: 8px 0 4px; font: 600 13px ui-monospace, monospace; color: #444; }
  iframe { display: block; width: 100%; border: 0; margin: 0 0 12px; background: #fff; border-radius: 8px; }
</style>
</head>
<body><main id="shown"></main><div id="aside"></div></body>
</html>`;

const ID = {
  ada: '0190a1b2-0000-7000-8000-00000000000a',
  byron: '0190a1b2-0000-7000-8000-00000000000b',
  babbage: '0190a1b2-0000-7000-8000-00000000000c',
  hopper: '0190a1b2-0000-7000-8000-00000000000d',
  duplicate: '0190a1b2-0000-7000-8000-00000000000e',
  johnson: '0190a1b2-0000-7000-8000-00000000000f',
  mallory: '0190a1b2-0000-7000-8000-000000000010',
};
const HOSTILE_NAME = 'Mallory <img src=x onerror="document.title=1">';

// The drawing does not depend on the database: SQLite alone, as test/http/docs-page.test.ts does for the browser.
describe.runIf(!skipBrowser('contact cards browser test'))(
  'the contact cards in headless Chromium, hosted through ext-apps’ AppBridge',
  () => {
    let dispose: () => Promise<void>;
    let app: FastifyInstance;
    let client: V1Client;
    let browser: Browser;
    let page: Page;
    let cardsPage: string;
    const requests: string[] = [];
    const consoleErrors: string[] = [];
    const results: Record<string, CallToolResult> = {};

    const call = async (name: string, args: Record<string, unknown>) =>
      (await client.callTool({ name, arguments: args })) as CallToolResult;
    const frame = (title: string): FrameLocator => page.frameLocator(`iframe[title="${title}"]`);
    const texts = (frameLocator: FrameLocator, selector: string) => frameLocator.locator(selector).allInnerTexts();
    /** The page's background and text colours, as drawn. */
    const colours = (frameLocator: FrameLocator) =>
      frameLocator.locator('body').evaluate((body) => {
        const style = (globalThis as any).getComputedStyle(body);
        return [style.backgroundColor, style.color];
      });

    /** Shows `result` in a new frame, the host telling the page `hostContext` (McpUiHostContext: theme, style variables). */
    async function show(
      title: string,
      result: CallToolResult,
      parent = 'shown',
      hostContext: object = { theme: 'light' },
    ): Promise<FrameLocator> {
      await page.evaluate((args) => (globalThis as any).showCards(args), { title, page: cardsPage, result, hostContext, parent });
      const shown = frame(title);
      await shown.locator('main[aria-busy="false"]').waitFor({ state: 'attached' });
      return shown;
    }

    beforeAll(async () => {
      const created = await createTestDatabase('sqlite', null);
      dispose = created.dispose;
      const { store } = created.database;
      const owner = await createUser(store, 'pro');
      const { key } = await createKey(store, owner.id);
      const at = (minute: number) => new Date(Date.parse('2024-06-01T00:00:00.000Z') + minute * 60_000).toISOString();
      await store.contacts.importContacts(owner.id, [
        contactRecord(
          {
            name: 'Ada Lovelace',
            title: 'Mathematician',
            company: 'Analytical Engines',
            email: 'ada@example.com',
            phone: '+44 20 7946 0018',
            tags: ['math', 'pioneer'],
            created_at: at(0),
          },
          ID.ada,
        ),
        contactRecord(
          { name: 'Ada Byron', title: 'Countess', email: 'countess@example.org', tags: ['family'], created_at: at(1) },
          ID.byron,
        ),
        contactRecord({ name: 'Charles Babbage', company: 'Difference Engines', phone: '020 7946 0999', created_at: at(2) }, ID.babbage),
        contactRecord({ name: 'Grace Hopper', company: 'US Navy', created_at: at(3) }, ID.hopper),
        contactRecord({ name: 'Ada L.', email: 'ada.l@example.com', created_at: at(4) }, ID.duplicate),
        contactRecord({ name: HOSTILE_NAME, tags: ['<b>bold</b>'], created_at: at(7) }, ID.mallory),
      ]);
      app = await buildTestApp(store);
      const { origin } = await listenOnFreePort(app);
      const since = (await listContactChanges(app, key)).json().next_since as string;
      await store.contacts.importContacts(owner.id, [
        contactRecord(
          { name: 'Katherine Johnson', title: 'Mathematician', company: 'NASA', tags: ['math'], created_at: at(6) },
          ID.johnson,
        ),
      ]);
      await store.contacts.merge(owner.id, ID.duplicate, ID.ada);
      await store.contacts.delete(owner.id, [ID.hopper]);

      client = new V1Client({ name: 'contacts-cards-test', version: '1.0.0' });
      await client.connect(new V1StreamableHTTPClientTransport(new URL(`${origin}/mcp`), { requestInit: { headers: bearer(key) } }));
      results.list_contacts = await call('list_contacts', { limit: 4 });
      results.search_contacts = await call('search_contacts', { query: 'ada' });
      results.get_contact = await call('get_contact', { id: ID.duplicate });
      results.hostile = await call('search_contacts', { query: 'mallory' });
      results.list_changes = await call('list_changes', { since });

      const pageClient = await cardsClient();
      cardsPage = (await readCardsPage(pageClient)).html;
      await pageClient.close();
      browser = await chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS });
      // Tall enough to show every frame: Chromium does not render a cross-origin frame out of view, so it would not resize.
      page = await browser.newPage({ viewport: { width: 800, height: 1600 } });
      page.on('request', (request) => requests.push(request.url()));
      page.on('console', (message) => {
        if (message.type() === 'error' || message.type() === 'warning') consoleErrors.push(message.text());
      });
      await page.setContent(HOST_PAGE);
      await page.addScriptTag({ content: await bundleForBrowser(HOST_SCRIPT) });
    }, 60_000);
    afterAll(async () => {
      await browser?.close();
      await client?.close();
      await app?.close();
      await dispose?.();
    });

    it('draws list_contacts: each person’s name, title and company, email and phone as links, and tags', async () => {
      expect(results.list_contacts!.structuredContent).toMatchObject({ pagination: { total: 5 } });
      const shown = await show('list_contacts', results.list_contacts!);
      expect(await texts(shown, '.name')).toEqual(['Ada Lovelace', 'Ada Byron', 'Charles Babbage', 'Katherine Johnson']);
      const ada = shown.locator(`[data-id="${ID.ada}"]`);
      await expect(ada.locator('.role').innerText()).resolves.toBe('Mathematician at Analytical Engines');
      await expect(ada.locator('a.email').getAttribute('href')).resolves.toBe('mailto:ada@example.com');
      await expect(ada.locator('a.phone').getAttribute('href')).resolves.toBe('tel:+442079460018');
      await expect(ada.locator('a.phone').innerText()).resolves.toBe('+44 20 7946 0018');
      expect(await ada.locator('.tag').allInnerTexts()).toEqual(['math', 'pioneer']);
      await expect(shown.locator(`[data-id="${ID.babbage}"] a.phone`).getAttribute('href')).resolves.toBe('tel:02079460999');
      await expect(shown.locator(`[data-id="${ID.babbage}"] .role`).innerText()).resolves.toBe('Difference Engines');
      await expect(shown.locator('.status').count()).resolves.toBe(0);
    });

    it('draws search_contacts: the hits with what matched, and says in words when the name is ambiguous', async () => {
      expect(results.search_contacts!.structuredContent).toMatchObject({ ambiguous: true });
      const shown = await show('search_contacts', results.search_contacts!);
      expect(await texts(shown, '.note')).toEqual(['Ambiguous: several people match “ada” equally well by name. Which one is meant?']);
      expect(await texts(shown, '.name')).toEqual(['Ada Lovelace', 'Ada Byron']);
      expect(await texts(shown, '.matched')).toEqual(['Matched: name, email', 'Matched: name']);
    });

    it('draws get_contact of a merged duplicate: the surviving person, marked as a merge in words', async () => {
      const shown = await show('get_contact', results.get_contact!);
      expect(await texts(shown, '.name')).toEqual(['Ada Lovelace']);
      expect(await texts(shown, '.card.merged .status')).toEqual([`Merged: ${ID.duplicate} was merged into this contact`]);
    });

    it('draws list_changes: the added person as a card, the merged and the deleted marked in words', async () => {
      const shown = await show('list_changes', results.list_changes!);
      const byId = (id: string) => shown.locator(`[data-id="${id}"]`);
      await expect(byId(ID.johnson).locator('.name').innerText()).resolves.toBe('Katherine Johnson');
      await expect(byId(ID.johnson).locator('.status').count()).resolves.toBe(0);
      await expect(byId(ID.duplicate).getAttribute('class')).resolves.toBe('card merged');
      // The survivor is not in this page of changes: the merge names it by id.
      expect(await byId(ID.duplicate).locator('.name, .status').allInnerTexts()).toEqual(['Ada L.', 'Merged into Ada Lovelace']);
      await expect(byId(ID.hopper).getAttribute('class')).resolves.toBe('card deleted');
      expect(await byId(ID.hopper).locator('.name, .status').allInnerTexts()).toEqual(['Grace Hopper', 'Deleted']);
    });

    it('opens a link through the host: a click on an address asks for ui/open-link', async () => {
      await frame('list_contacts').locator(`[data-id="${ID.ada}"] a.email`).click();
      await expect.poll(() => page.evaluate(() => (globalThis as any).openedLinks)).toEqual(['mailto:ada@example.com']);
    });

    it('draws every value as text: markup in a name or a tag stays words on the card', async () => {
      await page.locator('#shown').screenshot({ path: SCREENSHOT });
      const shown = await show('hostile', results.hostile!, 'aside');
      expect(await texts(shown, '.name')).toEqual([HOSTILE_NAME]);
      expect(await texts(shown, '.tag')).toEqual(['<b>bold</b>']);
      await expect(shown.locator('img, b').count()).resolves.toBe(0);
    });

    it('draws a failed call as its message', async () => {
      const failed = await call('get_contact', { id: '0190a1b2-0000-7000-8000-0000000000ff' });
      expect(failed.isError).toBe(true);
      const shown = await show('not found', failed, 'aside');
      expect(await texts(shown, '.note')).toEqual(['Contact not found']);
      await expect(shown.locator('.card').count()).resolves.toBe(0);
    });

    it('is readable in the dark: the host’s dark theme, or else the system’s, gives a dark page with light text', async () => {
      const dark = ['rgb(31, 31, 31)', 'rgb(237, 237, 237)'];
      await expect(colours(await show('dark', results.search_contacts!, 'aside', { theme: 'dark' }))).resolves.toEqual(dark);
      await expect(colours(frame('search_contacts'))).resolves.toEqual(['rgb(255, 255, 255)', 'rgb(28, 28, 28)']);
      await page.emulateMedia({ colorScheme: 'dark' });
      await expect(colours(await show('no theme, a dark system', results.search_contacts!, 'aside', {}))).resolves.toEqual(dark);
      await page.emulateMedia({ colorScheme: 'light' });
    });

    it('takes the host’s colours when the host sends its style variables', async () => {
      const variables = { '--color-background-primary': 'rgb(250, 240, 230)', '--color-text-primary': 'rgb(40, 30, 20)' };
      const shown = await show('host styles', results.search_contacts!, 'aside', { theme: 'light', styles: { variables } });
      await expect(colours(shown)).resolves.toEqual(['rgb(250, 240, 230)', 'rgb(40, 30, 20)']);
    });

    it('fetched nothing from anywhere, and no policy refused anything', () => {
      expect(requests).toEqual([]);
      expect(consoleErrors).toEqual([]);
    });
  },
);
