import { readFileSync } from 'node:fs';
import type { McpUiResourceMeta, McpUiToolMeta } from '@modelcontextprotocol/ext-apps';
import { ProtocolError, ProtocolErrorCode, type McpServer, type Resource } from '@modelcontextprotocol/server';
import { INTERNAL_ERROR_MESSAGE } from '../domain/errors.js';
import { CARDS_PAGE_CACHE_HINT } from './cache-hints.js';

/**
 * The contact cards (MCP Apps, `io.modelcontextprotocol/ui`): one page that draws the people of a tool result in the
 * chat. ext-apps is a devDependency (it builds the page's script), so its server helpers are not imported here: this
 * is what registerAppResource and registerAppTool would declare (test/mcp/mcp-cards.test.ts compares the constants).
 */
export const CONTACT_CARDS_URI = 'ui://contacts/cards.html';
/** What the built page may weigh at most (it weighs about 240 KB; test/mcp/mcp-cards.test.ts holds it to this). */
export const CONTACT_CARDS_PAGE_MAX_BYTES = 320 * 1024;
export const MCP_APP_MIME_TYPE = 'text/html;profile=mcp-app';

/**
 * The `_meta` of the tools whose results the cards draw. Hosts without the extension ignore it; the legacy
 * `ui/resourceUri` key is for hosts from before `ui.resourceUri`. `visibility: ['model']`: the page never calls a
 * tool, so it is given none.
 */
export const CONTACT_CARDS_TOOL_META = {
  ui: { resourceUri: CONTACT_CARDS_URI, visibility: ['model'] },
  'ui/resourceUri': CONTACT_CARDS_URI,
} as const satisfies { ui: McpUiToolMeta; 'ui/resourceUri': string };

/** No outside origin at all: the page loads, fetches and frames nothing. */
const CONTACT_CARDS_UI = {
  csp: { connectDomains: [], resourceDomains: [], frameDomains: [], baseUriDomains: [] },
} satisfies McpUiResourceMeta;

/**
 * The page as `npm run build` made it (scripts/build-contact-cards.mjs): dist/ sits two levels above this file both
 * in src/mcp/ and in dist/mcp/.
 */
const PAGE_FILE = new URL('../../dist/mcp/contact-cards.html', import.meta.url);
const NOT_BUILT = `The contact cards page is not built (${PAGE_FILE.pathname}): npm run build builds it (scripts/build-contact-cards.mjs).`;
let page: string | undefined;

/** The built page; a page that cannot be read is told to `onError` and answered as any internal error, its path untold. */
function contactCardsPage(onError: (error: unknown) => void): string {
  try {
    page ??= readFileSync(PAGE_FILE, 'utf8');
  } catch (error) {
    onError(new Error(NOT_BUILT, { cause: error }));
    throw new ProtocolError(ProtocolErrorCode.InternalError, INTERNAL_ERROR_MESSAGE);
  }
  return page;
}

/** The page as resources/list gives it (the contacts' listing handler lists it first: contact-resources.ts). */
export const CONTACT_CARDS_RESOURCE = {
  uri: CONTACT_CARDS_URI,
  name: 'contact-cards',
  title: 'Contact cards',
  description: 'Draws the people of a list_contacts, search_contacts, get_contact or list_changes result as cards.',
  mimeType: MCP_APP_MIME_TYPE,
  _meta: { ui: CONTACT_CARDS_UI },
} as const satisfies Resource;

/** Registers ui://contacts/cards.html, the page the tools' CONTACT_CARDS_TOOL_META points hosts to. */
export function registerContactCards(server: McpServer, onError: (error: unknown) => void): void {
  const { uri, name, ...metadata } = CONTACT_CARDS_RESOURCE;
  server.registerResource(name, uri, { ...metadata, cacheHint: CARDS_PAGE_CACHE_HINT }, (uri) => ({
    contents: [{ uri: uri.href, mimeType: MCP_APP_MIME_TYPE, text: contactCardsPage(onError), _meta: { ui: CONTACT_CARDS_UI } }],
  }));
}
