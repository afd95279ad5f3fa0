import type { FastifyReply, FastifyRequest } from 'fastify';
import { principalOf } from '../web/authorize.js';
import { changeLogState } from '../operations/change-feed.js';
import { cardOfJson, firstListingPage, listingPages } from './cards.js';
import type { CardDavDependencies } from './dependencies.js';
import { parseDepth } from './depth.js';
import { multistatusDocument, multistatusStream } from './multistatus.js';
import type { DavResource } from './paths.js';
import { describe, needsSyncToken, type PropertyContext, type PropertyRequest, type Target } from './properties.js';
import { readPropfind } from './property-request.js';
import { sendMultistatus } from './reply.js';
import { ownedResource, requireCard } from './resources.js';
import { syncTokenUri } from './sync-token.js';

type Collection = Exclude<DavResource, { kind: 'card' }>;

/**
 * PROPFIND (RFC 4918 §9.1): the resource and, at depth 1, its members. The book's members are its cards, read a page
 * at a time and streamed; its sync token is the change log's position in the first page's snapshot.
 */
export async function propfind(deps: CardDavDependencies, request: FastifyRequest, reply: FastifyReply): Promise<FastifyReply> {
  const { ownerId } = principalOf(request);
  const resource = ownedResource(request, ownerId);
  const depth = parseDepth(request.headers.depth);
  const asked = readPropfind(request.body);
  if (resource.kind === 'card') {
    const card = await requireCard(deps.contacts, ownerId, resource.contactId);
    return sendMultistatus(reply, multistatusDocument([describe({ resource, card }, asked, { ownerId, syncToken: null })]));
  }
  if (resource.kind === 'book' && depth === 1) return sendMultistatus(reply, await bookWithCards(deps, ownerId, resource, asked));
  const targets: Collection[] = depth === 1 && resource.kind === 'home' ? [resource, { kind: 'book', userId: ownerId }] : [resource];
  const describesBook = targets.some((target) => target.kind === 'book') && needsSyncToken(asked);
  const context: PropertyContext = { ownerId, syncToken: describesBook ? await currentSyncToken(deps, ownerId) : null };
  return sendMultistatus(reply, multistatusDocument(targets.map((target) => describe({ resource: target }, asked, context))));
}

async function bookWithCards(deps: CardDavDependencies, ownerId: string, book: Collection, asked: PropertyRequest) {
  const first = await firstListingPage(deps.contacts, ownerId);
  const key = await deps.serviceKey.ready();
  const context: PropertyContext = { ownerId, syncToken: syncTokenUri(ownerId, first.log.currentSeq, key, Date.now()) };
  return multistatusStream(
    (async function* () {
      yield describe({ resource: book }, asked, context);
      for await (const page of listingPages(deps.contacts, ownerId, first)) {
        yield page.contacts.map((listed) => cardResponse(ownerId, listed.json, asked, context)).join('');
      }
    })(),
  );
}

/** The `<d:response>` of a card from its contact's JSON. */
export function cardResponse(ownerId: string, json: string, asked: PropertyRequest, context: PropertyContext): string {
  const card = cardOfJson(ownerId, json);
  const target: Target = { resource: { kind: 'card', userId: ownerId, contactId: card.contactId }, card };
  return describe(target, asked, context);
}

/** The book's sync token now. */
export async function currentSyncToken(deps: CardDavDependencies, ownerId: string): Promise<string> {
  const [log, key] = await Promise.all([changeLogState(deps.contacts, ownerId), deps.serviceKey.ready()]);
  return syncTokenUri(ownerId, log.currentSeq, key, Date.now());
}
