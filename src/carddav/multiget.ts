import type { Readable } from 'node:stream';
import { cardOfJson, firstListingPage, listingPages } from './cards.js';
import type { CardDavDependencies } from './dependencies.js';
import { multistatusStream, statusResponse } from './multistatus.js';
import { describe, type PropertyContext, type PropertyRequest } from './properties.js';
import { resourceOfHref } from './paths.js';
import { DAV_NS } from './namespaces.js';
import type { XmlElement } from './xml-reading.js';
import { getContacts } from '../operations/contacts.js';
import type { ListedRead } from '../store/store.js';

/**
 * Up to this many hrefs are read in one query by id (DAVx5 asks for 10 cards at a time); more are picked out of one walk
 * of the listing, a query per page (vdirsyncer asks for every card it lacks in one multiget). The walk costs what a
 * depth-1 PROPFIND costs, which such a client has just sent.
 */
const BY_ID_MAX = 32;

/**
 * addressbook-multiget (RFC 6352 §8.7): the cards the hrefs name, each once; an href that names none of the owner's
 * listable contacts (unknown, merged, deleted, another user's) is a 404 response.
 */
export async function multiget(deps: CardDavDependencies, ownerId: string, report: XmlElement, asked: PropertyRequest): Promise<Readable> {
  const hrefs = [...new Set(report.children.filter((child) => child.namespace === DAV_NS && child.name === 'href').map((h) => h.text))];
  const wanted = new Map<string, string>();
  const unknown: string[] = [];
  for (const href of hrefs) {
    const resource = resourceOfHref(href);
    if (resource?.kind === 'card' && resource.userId === ownerId) wanted.set(resource.contactId, href);
    else unknown.push(href);
  }
  const context: PropertyContext = { ownerId, syncToken: null };
  const found =
    wanted.size <= BY_ID_MAX
      ? byId(deps, ownerId, wanted, asked, context)
      : fromListing(deps, ownerId, await firstListingPage(deps.contacts, ownerId), wanted, asked, context);
  return multistatusStream(
    (async function* () {
      yield* found;
      yield unknown.map((href) => statusResponse(href, 404)).join('');
    })(),
  );
}

/** The cards of the wanted ids in one query, answered in the order asked; an id that names no card is a 404. */
async function* byId(
  deps: CardDavDependencies,
  ownerId: string,
  wanted: Map<string, string>,
  asked: PropertyRequest,
  context: PropertyContext,
) {
  const found = new Map((await getContacts(deps.contacts, ownerId, [...wanted.keys()])).map((listed) => [listed.key.id, listed.json]));
  const responses: string[] = [];
  for (const [contactId, href] of wanted) {
    const json = found.get(contactId);
    responses.push(
      json === undefined
        ? statusResponse(href, 404)
        : describe({ resource: { kind: 'card', userId: ownerId, contactId }, card: cardOfJson(ownerId, json) }, asked, context),
    );
  }
  yield responses.join('');
}

async function* fromListing(
  deps: CardDavDependencies,
  ownerId: string,
  first: ListedRead,
  wanted: Map<string, string>,
  asked: PropertyRequest,
  context: PropertyContext,
) {
  const left = new Map(wanted);
  for await (const page of listingPages(deps.contacts, ownerId, first)) {
    const responses: string[] = [];
    for (const listed of page.contacts) {
      if (!left.delete(listed.key.id)) continue;
      const card = cardOfJson(ownerId, listed.json);
      responses.push(describe({ resource: { kind: 'card', userId: ownerId, contactId: card.contactId }, card }, asked, context));
    }
    yield responses.join('');
    if (left.size === 0) return;
  }
  yield [...left.values()].map((href) => statusResponse(href, 404)).join('');
}
