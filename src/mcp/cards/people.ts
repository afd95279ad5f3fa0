/**
 * What the contact cards draw from a tool result: the people in it and the notes above them, read from the
 * structuredContent of list_contacts, search_contacts, get_contact or list_changes. Pure, so that the browser view
 * and the tests share it.
 */

/** How a card is marked, besides being a contact today. */
export type CardStatus = { kind: 'merged'; words: string } | { kind: 'deleted'; words: string };

export interface Card {
  id: string;
  name: string | null;
  title: string | null;
  company: string | null;
  email: string | null;
  phone: string | null;
  tags: string[];
  /** search_contacts: the fields the query matched. */
  matched: string[];
  status: CardStatus | null;
}

export interface CardsView {
  notes: string[];
  cards: Card[];
}

type Json = Record<string, unknown>;

const isObject = (value: unknown): value is Json => typeof value === 'object' && value !== null && !Array.isArray(value);
const text = (value: unknown): string | null => (typeof value === 'string' && value.trim() !== '' ? value : null);
const texts = (value: unknown): string[] => (Array.isArray(value) ? value.filter((item): item is string => text(item) !== null) : []);
const objects = (value: unknown): Json[] => (Array.isArray(value) ? value.filter(isObject) : []);

function cardOf(contact: Json, status: CardStatus | null = null): Card {
  return {
    id: text(contact.id) ?? '',
    name: text(contact.name),
    title: text(contact.title),
    company: text(contact.company),
    email: text(contact.email),
    phone: text(contact.phone),
    tags: texts(contact.tags),
    matched: texts(contact.matched),
    status,
  };
}

function getContactView(result: Json): CardsView {
  const contact = isObject(result.contact) ? result.contact : {};
  const mergedFrom = text(result.merged_from);
  const status: CardStatus | null =
    mergedFrom === null ? null : { kind: 'merged', words: `Merged: ${mergedFrom} was merged into this contact` };
  return { notes: [], cards: [cardOf(contact, status)] };
}

function searchView(result: Json): CardsView {
  const query = text(result.query) ?? '';
  const cards = objects(result.data).map((hit) => cardOf(hit));
  const notes =
    cards.length === 0
      ? [`No contacts match “${query}”.`]
      : result.ambiguous === true
        ? [`Ambiguous: several people match “${query}” equally well by name. Which one is meant?`]
        : [];
  return { notes, cards };
}

function changesView(result: Json): CardsView {
  const changes = objects(result.data);
  const names = new Map(
    changes.map((change) => [text(change.id), text(change.name) ?? text(isObject(change.contact) ? change.contact.name : null)]),
  );
  const cards = changes.map((change): Card => {
    const id = text(change.id) ?? '';
    const name = names.get(id) ?? null;
    if (change.type === 'merge') {
      const into = text(change.merged_into) ?? '';
      // list_changes names the survivor; a result of older servers may not, and the page may still hold it.
      const survivor = text(change.merged_into_name) ?? names.get(into);
      return cardOf({ id, name }, { kind: 'merged', words: survivor ? `Merged into ${survivor}` : `Merged into contact ${into}` });
    }
    if (change.type === 'delete') return cardOf({ id, name }, { kind: 'deleted', words: 'Deleted' });
    return cardOf(isObject(change.contact) ? change.contact : { id, name });
  });
  return { notes: cards.length === 0 ? ['No changes.'] : [], cards };
}

function listView(result: Json): CardsView {
  const cards = objects(result.data).map((contact) => cardOf(contact));
  const notes = [
    ...(cards.length === 0 ? ['No contacts on this page.'] : []),
    ...(result.truncated === true ? ['More contacts than fit here: the next page has the rest.'] : []),
  ];
  return { notes, cards };
}

/** The cards of one tool result's structuredContent (undefined when the host handed none, as with an error). */
export function cardsOf(structuredContent: unknown): CardsView {
  if (!isObject(structuredContent)) return { notes: ['This result has no contacts to show.'], cards: [] };
  if ('contact' in structuredContent) return getContactView(structuredContent);
  if ('ambiguous' in structuredContent) return searchView(structuredContent);
  if ('next_since' in structuredContent) return changesView(structuredContent);
  return listView(structuredContent);
}

/** A failed call's message (its first text block), as the one note. */
export function failedCallView(content: readonly { type: string; text?: string }[]): CardsView {
  return { notes: [content.find((block) => block.type === 'text')?.text ?? 'The tool call failed.'], cards: [] };
}

/** The mailto: link of an address, or null when it is not a plain address (a link must not smuggle headers in). */
export function mailtoOf(email: string): string | null {
  return /^[^\s@?&#<>"]+@[^\s@?&#<>"]+$/.test(email) ? `mailto:${email}` : null;
}

/** The tel: link of a phone number as written ("+1 (415) 555-0100" dials +14155550100), or null without digits to dial. */
export function telOf(phone: string): string | null {
  const dialled = phone.replace(/[^\d+]/g, '').replace(/(?!^)\+/g, '');
  return /\d{3,}/.test(dialled) ? `tel:${dialled}` : null;
}
