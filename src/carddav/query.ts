import type { Readable } from 'node:stream';
import type { Contact } from 'contacts-read-api-client';
import { InputError } from '../domain/errors.js';
import { cardOf, firstListingPage, listingPages } from './cards.js';
import type { CardDavDependencies } from './dependencies.js';
import { multistatusStream, statusResponse } from './multistatus.js';
import { bookPath } from './paths.js';
import { describe, type PropertyContext, type PropertyRequest } from './properties.js';
import { readQueryFilter } from './query-filter.js';
import { CARDDAV_NS } from './namespaces.js';
import { childOf, type XmlElement } from './xml-reading.js';

/**
 * addressbook-query (RFC 6352 §8.6): the cards whose contact matches the filter, in list order, from one walk of the
 * listing. With CARDDAV:limit, at most that many, and then a 507 response for the book (§8.6.1) when more matched.
 */
export async function addressbookQuery(
  deps: CardDavDependencies,
  ownerId: string,
  report: XmlElement,
  asked: PropertyRequest,
): Promise<Readable> {
  const matches = readQueryFilter(childOf(report, CARDDAV_NS, 'filter'));
  const limit = limitOf(report);
  const first = await firstListingPage(deps.contacts, ownerId);
  const context: PropertyContext = { ownerId, syncToken: null };
  return multistatusStream(
    (async function* () {
      let sent = 0;
      for await (const page of listingPages(deps.contacts, ownerId, first)) {
        const responses: string[] = [];
        for (const listed of page.contacts) {
          const contact = JSON.parse(listed.json) as Contact;
          if (!matches(contact)) continue;
          if (sent === limit) {
            yield responses.join('') + statusResponse(bookPath(ownerId), 507);
            return;
          }
          sent++;
          const card = cardOf(ownerId, contact);
          responses.push(describe({ resource: { kind: 'card', userId: ownerId, contactId: card.contactId }, card }, asked, context));
        }
        yield responses.join('');
      }
    })(),
  );
}

function limitOf(report: XmlElement): number | null {
  const text = childOf(childOf(report, CARDDAV_NS, 'limit') ?? report, CARDDAV_NS, 'nresults')?.text;
  if (text === undefined) return null;
  if (!/^[0-9]{1,9}$/.test(text)) throw new InputError('CARDDAV:nresults must be a non-negative integer');
  return Number(text);
}
