// Builds the contact cards page (ui://contacts/cards.html) into dist/mcp/contact-cards.html: src/mcp/cards/view.ts
// bundled with ext-apps' App for the browser, inlined into src/mcp/cards/cards.html, and that script and the page's
// style pinned by their SHA-256 in the page's Content-Security-Policy. A host renders the page from the resource's
// text alone, so nothing in it may come from elsewhere.
import { createHash } from 'node:crypto';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { bundleForBrowser } from './browser-bundle.mjs';

const root = new URL('../', import.meta.url);
const cards = new URL('src/mcp/cards/', root);
const CONTACT_CARDS_PAGE = new URL('dist/mcp/contact-cards.html', root);

const SCRIPT_MARKER = '<script src="./view.ts"></script>';
const POLICY_MARKER = '<meta http-equiv="Content-Security-Policy" content="" />';

/** The view is browser code, outside tsconfig.json (its DOM types clash with Node's): it is checked here instead. */
function typecheckView() {
  const configFile = fileURLToPath(new URL('tsconfig.json', cards));
  const { config } = ts.readConfigFile(configFile, ts.sys.readFile);
  const { options, fileNames } = ts.parseJsonConfigFileContent(config, ts.sys, fileURLToPath(cards));
  const diagnostics = ts.getPreEmitDiagnostics(ts.createProgram(fileNames, { ...options, noEmit: true }));
  if (diagnostics.length === 0) return;
  const host = { getCanonicalFileName: (name) => name, getCurrentDirectory: ts.sys.getCurrentDirectory, getNewLine: () => '\n' };
  throw new Error(`The contact cards view does not typecheck:\n${ts.formatDiagnostics(diagnostics, host)}`);
}

const sha256 = (text) => `'sha256-${createHash('sha256').update(text, 'utf8').digest('base64')}'`;

function replaceOnce(page, marker, replacement) {
  const parts = page.split(marker);
  if (parts.length !== 2) throw new Error(`src/mcp/cards/cards.html must hold ${marker} once.`);
  return parts.join(replacement);
}

/** The page as the server sends it. */
async function buildContactCardsPage() {
  const template = readFileSync(new URL('cards.html', cards), 'utf8');
  const style = /<style>([\s\S]*?)<\/style>/.exec(template)?.[1];
  if (style === undefined) throw new Error('src/mcp/cards/cards.html must hold its style in one <style> element.');
  typecheckView();
  const script = await bundleForBrowser(fileURLToPath(new URL('view.ts', cards)));
  const policy = [
    "default-src 'none'",
    `script-src ${sha256(script)}`,
    `style-src ${sha256(style)}`,
    "base-uri 'none'",
    "form-action 'none'",
  ].join('; ');
  const withPolicy = replaceOnce(template, POLICY_MARKER, `<meta http-equiv="Content-Security-Policy" content="${policy}" />`);
  return replaceOnce(withPolicy, SCRIPT_MARKER, `<script>${script}</script>`);
}

const page = await buildContactCardsPage();
mkdirSync(new URL('.', CONTACT_CARDS_PAGE), { recursive: true });
writeFileSync(CONTACT_CARDS_PAGE, page);
