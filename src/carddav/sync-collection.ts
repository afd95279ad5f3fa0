import type { Readable } from 'node:stream';
import { InputError } from '../domain/errors.js';
import { changeBatches, readChangesAfterToken } from '../operations/change-feed.js';
import type { ChangeRecord } from '../store/store.js';
import { cardOfJson, firstListingPage, LISTING_PAGE_SIZE, listingPages } from './cards.js';
import type { CardDavDependencies } from './dependencies.js';
import { dav, multistatusStream, statusResponse, textElement } from './multistatus.js';
import { cardPath } from './paths.js';
import { describe, type PropertyContext, type PropertyRequest } from './properties.js';
import { asInvalidSyncToken, positionOfSyncToken, syncTokenUri } from './sync-token.js';
import { DAV_NS } from './namespaces.js';
import { childOf, type XmlElement } from './xml-reading.js';

/**
 * sync-collection (RFC 6578) over the change feed. No token: every card, and the position the log stood at in the
 * first page's snapshot (a change made during the walk comes again next time). A token: the contacts changed after it,
 * each in its state now: listable ones as cards, merged and deleted ones as 404 members; then the position reached.
 * A token this book did not issue, of another user, or older than the log keeps is a 403 valid-sync-token.
 */
export async function syncCollection(
  deps: CardDavDependencies,
  ownerId: string,
  report: XmlElement,
  asked: PropertyRequest,
): Promise<Readable> {
  const level = childOf(report, DAV_NS, 'sync-level')?.text;
  if (level !== undefined && level !== '1') throw new InputError('DAV:sync-level must be 1: the address book holds cards only');
  const given = childOf(report, DAV_NS, 'sync-token')?.text ?? '';
  const key = await deps.serviceKey.ready();
  const now = Date.now();
  const context: PropertyContext = { ownerId, syncToken: null };
  const tokenElement = (seq: number) => textElement(dav('sync-token'), syncTokenUri(ownerId, seq, key, now));
  if (given === '') {
    const first = await firstListingPage(deps.contacts, ownerId);
    return multistatusStream(
      (async function* () {
        for await (const page of listingPages(deps.contacts, ownerId, first)) {
          yield page.contacts.map((listed) => memberResponse(ownerId, listed.json, asked, context)).join('');
        }
        yield tokenElement(first.log.currentSeq);
      })(),
    );
  }
  const since = positionOfSyncToken(given, ownerId, key);
  // The feed's 410 for a token the log cannot follow (expired, truncated, ahead) is a 403 valid-sync-token here.
  const first = await readChangesAfterToken(deps, ownerId, since, LISTING_PAGE_SIZE, now).catch(asInvalidSyncToken);
  return multistatusStream(
    (async function* () {
      let currentSeq = first.log.currentSeq;
      for await (const batch of changeBatches(deps.contacts, ownerId, first, LISTING_PAGE_SIZE)) {
        yield batch.changes.map((record) => changeResponse(ownerId, record, asked, context)).join('');
        // The last batch reaches the end of the log: it holds every change up to where the log stood in its snapshot.
        currentSeq = batch.log.currentSeq;
      }
      yield tokenElement(currentSeq);
    })(),
  );
}

function memberResponse(ownerId: string, json: string, asked: PropertyRequest, context: PropertyContext): string {
  const card = cardOfJson(ownerId, json);
  return describe({ resource: { kind: 'card', userId: ownerId, contactId: card.contactId }, card }, asked, context);
}

function changeResponse(ownerId: string, record: ChangeRecord, asked: PropertyRequest, context: PropertyContext): string {
  const { state } = record;
  return state.kind === 'listable'
    ? memberResponse(ownerId, state.json, asked, context)
    : statusResponse(cardPath(ownerId, record.contactId), 404);
}
