/**
 * The contact cards' view: the script scripts/build-contact-cards.mjs bundles (with ext-apps' App) into cards.html.
 * It draws the people of the tool result the host hands it, with DOM nodes and textContent only: no value of a contact
 * is ever parsed as HTML.
 */
import {
  App,
  applyDocumentTheme,
  applyHostStyleVariables,
  PostMessageTransport,
  type McpUiHostContext,
} from '@modelcontextprotocol/ext-apps';
import { cardsOf, failedCallView, mailtoOf, telOf, type Card, type CardsView } from './people.js';

const app = new App({ name: 'contacts-cards', version: '1.0.0' }, {});
const root = document.getElementById('cards')!;

function element<K extends keyof HTMLElementTagNameMap>(tag: K, className: string, content?: string): HTMLElementTagNameMap[K] {
  const node = document.createElement(tag);
  node.className = className;
  if (content !== undefined) node.textContent = content;
  return node;
}

/** A link the host opens (a sandboxed frame may not navigate itself), or the bare text when it makes no link. */
function link(className: string, label: string, href: string | null): HTMLElement {
  if (href === null) return element('span', className, label);
  const anchor = element('a', className, label);
  anchor.href = href;
  anchor.addEventListener('click', (event) => {
    if (app.getHostCapabilities()?.openLinks === undefined) return;
    event.preventDefault();
    void app.openLink({ url: href });
  });
  return anchor;
}

function cardElement(card: Card): HTMLElement {
  const item = element('li', card.status === null ? 'card' : `card ${card.status.kind}`);
  item.dataset.id = card.id;
  item.append(element('h2', 'name', card.name ?? '(no name)'));
  if (card.status !== null) item.append(element('p', 'status', card.status.words));
  const role = [card.title, card.company].filter((part) => part !== null).join(' at ');
  if (role !== '') item.append(element('p', 'role', role));
  if (card.email !== null) item.append(link('email', card.email, mailtoOf(card.email)));
  if (card.phone !== null) item.append(link('phone', card.phone, telOf(card.phone)));
  if (card.tags.length > 0) {
    const tags = element('ul', 'tags');
    tags.setAttribute('aria-label', 'Tags');
    tags.append(...card.tags.map((tag) => element('li', 'tag', tag)));
    item.append(tags);
  }
  if (card.matched.length > 0) item.append(element('p', 'matched', `Matched: ${card.matched.join(', ')}`));
  return item;
}

function draw({ notes, cards }: CardsView): void {
  const list = element('ul', 'people');
  list.append(...cards.map(cardElement));
  root.replaceChildren(...notes.map((note) => element('p', 'note', note)), list);
  root.setAttribute('aria-busy', 'false');
}

function applyHostContext(context: McpUiHostContext): void {
  if (context.theme !== undefined) applyDocumentTheme(context.theme);
  if (context.styles?.variables !== undefined) applyHostStyleVariables(context.styles.variables);
}

app.ontoolresult = (result) => draw(result.isError === true ? failedCallView(result.content) : cardsOf(result.structuredContent));
app.onhostcontextchanged = applyHostContext;
void app.connect(new PostMessageTransport(window.parent, window.parent)).then(() => {
  const context = app.getHostContext();
  if (context !== undefined) applyHostContext(context);
});
