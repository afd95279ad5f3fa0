import type { Readable } from 'node:stream';
import type { SyncToken } from '../domain/changes.js';
import { InputError } from '../domain/errors.js';
import type { ChangeRead, ChangeRecord } from '../store/store.js';
import { cardOfJson, firstListingPage, LISTING_PAGE_SIZE, listingPages } from './cards.js';
import type { CardDavDependencies } from './dependencies.js';
import { dav, multistatusStream, statusResponse, textElement } from './multistatus.js';
import { cardPath } from './paths.js';
import { describe, type PropertyContext, type PropertyRequest } from './properties.js';
import { assertSyncTokenFollowable, positionOfSyncToken, syncTokenUri } from './sync-token.js';
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
  const first = await deps.contacts.readChanges(ownerId, since, LISTING_PAGE_SIZE);
  assertSyncTokenFollowable(since, first.log, deps.retentionMs, now);
  return multistatusStream(
    (async function* () {
      let read: ChangeRead = first;
      let position: SyncToken = since;
      for (;;) {
        yield read.records.map((record) => changeResponse(ownerId, record, asked, context)).join('');
        const last = read.records.at(-1);
        if (read.records.length < LISTING_PAGE_SIZE || last === undefined) break;
        position = { ...position, seq: last.seq, after: last.contactId };
        read = await deps.contacts.readChanges(ownerId, position, LISTING_PAGE_SIZE);
      }
      // The last read holds every change up to where the log stood in its snapshot.
      yield tokenElement(read.log.currentSeq);
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
