import type { FastifyRequest } from 'fastify';
import { NotFoundError } from '../domain/errors.js';
import { getContact, type ContactReader } from '../operations/contacts.js';
import { cardOf, type Card } from './cards.js';
import { resourceAt, type DavResource } from './paths.js';

export const NO_SUCH_RESOURCE_MESSAGE = 'No such address book resource';

/**
 * The resource the request's path names, when it is the key owner's (or the shared root). Another user's path is a 404
 * like an unknown one, so a 404 never confirms that a user exists.
 */
export function ownedResource(request: FastifyRequest, ownerId: string): DavResource {
  const resource = resourceAt(request.url.split('?', 1)[0]!);
  if (resource === null || ('userId' in resource && resource.userId !== ownerId)) throw new NotFoundError(NO_SUCH_RESOURCE_MESSAGE);
  return resource;
}

/** The card of one of the owner's contacts, or null for an unknown id, a merged duplicate or the self row. */
export async function findCard(contacts: ContactReader, ownerId: string, contactId: string): Promise<Card | null> {
  const found = await getContact(contacts, ownerId, contactId);
  return found === null || found.mergedFrom !== null ? null : cardOf(ownerId, found.contact);
}

/** The card a path names, or 404. */
export async function requireCard(contacts: ContactReader, ownerId: string, contactId: string): Promise<Card> {
  const card = await findCard(contacts, ownerId, contactId);
  if (card === null) throw new NotFoundError(NO_SUCH_RESOURCE_MESSAGE);
  return card;
}
