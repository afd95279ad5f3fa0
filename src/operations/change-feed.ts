import {
  assertTokenFollowable,
  SYNC_TOKEN_EXPIRED_MESSAGE,
  type ChangeLogState,
  type ChangePosition,
  type SyncToken,
} from '../domain/changes.js';
import { PublicError } from '../domain/errors.js';
import type { SortKey } from '../domain/pagination.js';
import { isPastRetention, pendingSinceOf } from '../domain/webhooks.js';
import type { ChangeRecord, ContactStore, ListedRead } from '../store/store.js';

/**
 * The walk of an owner's change log that the REST change feed, CardDAV's sync-collection and the webhook dispatcher
 * share: a batch of changes after a position, and the one check (changesLost) that the log still holds every change
 * after it.
 */
export type ChangeLogReader = Pick<ContactStore, 'changeLog' | 'readChanges' | 'readListed' | 'countChangesAfter' | 'positionAt'>;

/** What a reader of the feed on a client's token needs: the log, and how long it keeps changes. */
export interface ChangeFeedSource {
  contacts: ChangeLogReader;
  /** CHANGES_RETENTION_DAYS, in ms. */
  retentionMs: number;
}

/** At most `limit` changes after a position, oldest first, read in one snapshot with the log's state. */
export interface ChangeBatch {
  log: ChangeLogState;
  changes: ChangeRecord[];
  /** The change after the batch, when more wait (the next batch starts with it); undefined when the batch ends the log. */
  next: ChangeRecord | undefined;
}

/** The batch of the owner's changes after `after`, reading one more to know whether more wait. */
export async function readChangeBatch(
  contacts: ChangeLogReader,
  ownerId: string,
  after: ChangePosition,
  limit: number,
): Promise<ChangeBatch> {
  const read = await contacts.readChanges(ownerId, after, limit + 1);
  return { log: read.log, changes: read.records.slice(0, limit), next: read.records[limit] };
}

/** Where the owner's change log stands. */
export function changeLogState(contacts: ChangeLogReader, ownerId: string): Promise<ChangeLogState> {
  return contacts.changeLog(ownerId);
}

/** Where the owner's change log stands, refusing a token the log cannot follow (410, assertTokenFollowable). */
export async function changeLogForToken(feed: ChangeFeedSource, ownerId: string, token: SyncToken, now: number): Promise<ChangeLogState> {
  const log = await changeLogState(feed.contacts, ownerId);
  assertTokenFollowable(token, log, feed.retentionMs, now);
  return log;
}

/** The first batch of changes after a token's position, refusing a token the log cannot follow (410, assertTokenFollowable). */
export async function readChangesAfterToken(
  feed: ChangeFeedSource,
  ownerId: string,
  token: SyncToken,
  limit: number,
  now: number,
): Promise<ChangeBatch> {
  const batch = await readChangeBatch(feed.contacts, ownerId, token, limit);
  assertTokenFollowable(token, batch.log, feed.retentionMs, now);
  return batch;
}

/** The batches of the owner's changes from `first` (already read, and checked) to the end of the log, `limit` at a time. */
export async function* changeBatches(
  contacts: ChangeLogReader,
  ownerId: string,
  first: ChangeBatch,
  limit: number,
): AsyncGenerator<ChangeBatch> {
  let batch = first;
  for (;;) {
    yield batch;
    const last = batch.changes.at(-1);
    if (batch.next === undefined || last === undefined) return;
    batch = await readChangeBatch(contacts, ownerId, { seq: last.seq, after: last.contactId }, limit);
  }
}

/**
 * At most `limit` listable contacts after `after` (from the first when null) in list order, with the log's state: a
 * walk of the listing from nothing, which the changes made meanwhile then follow.
 */
export function readListedAfter(contacts: ChangeLogReader, ownerId: string, after: SortKey | null, limit: number): Promise<ListedRead> {
  return contacts.readListed(ownerId, after, limit);
}

/**
 * The next page of a walk from since=0 (readListedAfter), the first when `walk` is null; a walk's token is refused when
 * the log cannot follow it (410, assertTokenFollowable).
 */
export async function readListedAfterToken(
  feed: ChangeFeedSource,
  ownerId: string,
  walk: SyncToken | null,
  limit: number,
  now: number,
): Promise<ListedRead> {
  const read = await readListedAfter(feed.contacts, ownerId, walk?.listedThrough ?? null, limit);
  if (walk !== null) assertTokenFollowable(walk, read.log, feed.retentionMs, now);
  return read;
}

/** A change as a reader of the feed gets it: a walk from since=0 sends each listed contact as a listable one. */
export type FeedChange = Pick<ChangeRecord, 'contactId' | 'changedAt' | 'state'>;

/** One answer of the feed: its changes, oldest first, where the reader goes on, and whether more waits now. */
export interface FeedPage {
  changes: FeedChange[];
  next: SyncToken;
  hasMore: boolean;
  /** Where a reader that took only the first `count` changes (1 or more) goes on: a door that cuts a page to a budget. */
  nextAfter: (count: number) => SyncToken;
}

/**
 * The answer to `since` (null: since=0), as the REST feed and MCP's list_changes give it: a page of the walk from
 * since=0 while it sends the listing, else the changes after the token's position.
 */
export function readFeedPage(
  feed: ChangeFeedSource,
  ownerId: string,
  since: SyncToken | null,
  limit: number,
  now: number,
): Promise<FeedPage> {
  return since === null || since.listedThrough !== null
    ? listedPage(feed, ownerId, since, limit, now)
    : changesPage(feed, ownerId, since, limit, now);
}

/**
 * The changes made at or after `time` (ms, not in the future), read as a token issued at that time at the position
 * before the first of them: the one rule (assertTokenFollowable) then refuses a time older than the retention, and a
 * log cleared after it (positionAt's null) is refused alike (410: start again from since=0).
 */
export async function readFeedPageSince(
  feed: ChangeFeedSource,
  ownerId: string,
  time: number,
  limit: number,
  now: number,
): Promise<FeedPage> {
  const position = await feed.contacts.positionAt(ownerId, new Date(time).toISOString());
  if (position === null) throw new PublicError(410, SYNC_TOKEN_EXPIRED_MESSAGE);
  return changesPage(feed, ownerId, { ownerId, ...position, issuedAt: time, listedThrough: null }, limit, now);
}

/**
 * A page of a walk from since=0: the listable contacts after the last one sent, in list order, as upserts. The first
 * page pins where the log stands in the same snapshot as its rows, so any change a page misses comes after that
 * position and is replayed once the listing is sent; a contact deleted before the walk reaches it is never sent, and
 * its delete replayed. The walk's tokens keep its start time: the changes from its position must outlive the walk.
 */
async function listedPage(feed: ChangeFeedSource, ownerId: string, walk: SyncToken | null, limit: number, now: number): Promise<FeedPage> {
  const read = await readListedAfterToken(feed, ownerId, walk, limit + 1, now);
  const start = walk ?? { ownerId, seq: read.log.currentSeq, after: null, issuedAt: now, listedThrough: null };
  const listed = read.contacts.slice(0, limit);
  const more = read.contacts.length > limit;
  return {
    changes: listed.map((contact) => ({
      contactId: contact.key.id,
      changedAt: contact.updatedAt,
      state: { kind: 'listable', json: contact.json },
    })),
    next: { ...start, listedThrough: more ? listed.at(-1)!.key : null },
    hasMore: more || read.log.currentSeq > start.seq,
    nextAfter: (count) => ({ ...start, listedThrough: listed[count - 1]!.key }),
  };
}

/** The changes after a token's position, oldest first. */
async function changesPage(feed: ChangeFeedSource, ownerId: string, since: SyncToken, limit: number, now: number): Promise<FeedPage> {
  const { log, changes, next } = await readChangesAfterToken(feed, ownerId, since, limit, now);
  const hasMore = next !== undefined;
  const last = changes.at(-1);
  const position = hasMore && last ? { seq: last.seq, after: last.contactId } : { seq: log.currentSeq, after: null };
  const tokenAt = (at: ChangePosition): SyncToken => ({ ownerId, ...at, issuedAt: now, listedThrough: null });
  return {
    changes,
    next: tokenAt(position),
    hasMore,
    nextAfter: (count) => tokenAt({ seq: changes[count - 1]!.seq, after: changes[count - 1]!.contactId }),
  };
}

/** The owner's listing in list order, `limit` at a time, from `first` (already read) to the end. */
export async function* listingBatches(
  contacts: ChangeLogReader,
  ownerId: string,
  first: ListedRead,
  limit: number,
): AsyncGenerator<ListedRead> {
  let page = first;
  for (;;) {
    yield page;
    const last = page.contacts.at(-1);
    if (page.contacts.length < limit || last === undefined) return;
    page = await readListedAfter(contacts, ownerId, last.key, limit);
  }
}

/** A webhook endpoint as far as reading its changes goes: whose they are, where it stands and since when changes wait. */
export interface EndpointPosition {
  ownerId: string;
  cursor: ChangePosition;
  pendingSince: string;
  failedAttempts: number;
}

/** An endpoint's next batch (ChangeBatch), with since when its changes wait and whether some may be gone already. */
export interface EndpointBatch extends ChangeBatch {
  /** When the read finished: the time the retention is judged at. */
  startedAt: number;
  /** pendingSinceOf the batch's first change; the read's time when nothing waits (nothing waiting is nothing lost). */
  pendingSince: string;
  /** The log may no longer hold every change after the cursor (changesLost): the endpoint must resync. */
  pastRetention: boolean;
}

/** The webhook dispatcher's read: the endpoint's next batch of `limit` changes after its cursor, judged by the one check. */
export async function readEndpointBatch(
  contacts: ChangeLogReader,
  endpoint: EndpointPosition,
  limit: number,
  clock: { now: () => number; retentionMs: number },
): Promise<EndpointBatch> {
  const batch = await readChangeBatch(contacts, endpoint.ownerId, endpoint.cursor, limit);
  const startedAt = clock.now();
  const first = batch.changes[0];
  const pendingSince = first === undefined ? new Date(startedAt).toISOString() : pendingSinceOf(endpoint, first);
  const pastRetention = isPastRetention({ pendingSince, cursor: endpoint.cursor }, batch.log, startedAt, clock.retentionMs);
  return { ...batch, startedAt, pendingSince, pastRetention };
}

/** How many contacts' last change comes after an endpoint's cursor: its lag, in events. */
export function countChangesWaiting(contacts: ChangeLogReader, endpoint: Pick<EndpointPosition, 'ownerId' | 'cursor'>): Promise<number> {
  return contacts.countChangesAfter(endpoint.ownerId, endpoint.cursor);
}
