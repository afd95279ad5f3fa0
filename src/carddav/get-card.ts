import type { FastifyReply, FastifyRequest } from 'fastify';
import { PublicError } from '../domain/errors.js';
import { principalOf } from '../web/authorize.js';
import { notModified } from '../web/conditional.js';
import { CARD_CONTENT_TYPE } from './cards.js';
import type { CardDavDependencies } from './dependencies.js';
import { ownedResource, requireCard } from './resources.js';
import { READ_METHODS } from './read-only.js';

/** GET (and HEAD) of a card: its vCard 3.0 with its ETag; If-None-Match naming the tag gets 304. */
export async function getCard(deps: CardDavDependencies, request: FastifyRequest, reply: FastifyReply): Promise<FastifyReply> {
  const { ownerId } = principalOf(request);
  const resource = ownedResource(request, ownerId);
  if (resource.kind !== 'card') {
    throw new PublicError(405, 'A collection has no content to GET; use PROPFIND', { headers: { allow: READ_METHODS.join(', ') } });
  }
  const card = await requireCard(deps.contacts, ownerId, resource.contactId);
  if (notModified(request, reply, card.etag)) return reply;
  return reply.header('etag', card.etag).type(CARD_CONTENT_TYPE).send(card.body);
}
