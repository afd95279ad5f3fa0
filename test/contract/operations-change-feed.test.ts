import { beforeAll, describe, expect, it } from 'vitest';
import { SYNC_TOKEN_EXPIRED_MESSAGE, type SyncToken } from '../../src/domain/changes.js';
import { PublicError } from '../../src/domain/errors.js';
import {
  changeBatches,
  changeLogForToken,
  countChangesWaiting,
  readChangeBatch,
  readChangesAfterToken,
  readEndpointBatch,
} from '../../src/operations/change-feed.js';
import type { Store } from '../../src/store/store.js';
import { describeEachBackend } from '../support/backends.js';
import { createUser, importNumberedContacts } from '../support/seed.js';

const DAY = 86_400_000;
const RETENTION_MS = 30 * DAY;

describeEachBackend('Operations: the change feed', (db) => {
  let store: Store;
  let ownerId: string;
  const start = { seq: 0, after: null };

  beforeAll(async () => {
    store = db().store;
    ownerId = (await createUser(store)).id;
    await importNumberedContacts(store, ownerId, 5, 'Feed');
  });

  const token = (fields: Partial<SyncToken> = {}): SyncToken => ({
    ownerId,
    seq: 0,
    after: null,
    issuedAt: Date.now(),
    listedThrough: null,
    ...fields,
  });

  it('readChangeBatch reads a batch and the change after it; the batch that ends the log has none', async () => {
    const first = await readChangeBatch(store.contacts, ownerId, start, 3);
    expect(first.changes).toHaveLength(3);
    expect(first.next).toBeDefined();
    const last = first.changes.at(-1)!;
    const rest = await readChangeBatch(store.contacts, ownerId, { seq: last.seq, after: last.contactId }, 3);
    expect(rest.changes.map((change) => change.contactId)).toEqual([first.next!.contactId, expect.any(String)]);
    expect(rest.next).toBeUndefined();
  });

  it('changeBatches walks from the first batch to the end of the log, each change once', async () => {
    const feed = { contacts: store.contacts, retentionMs: RETENTION_MS };
    const first = await readChangesAfterToken(feed, ownerId, token(), 2, Date.now());
    const walked = [];
    for await (const batch of changeBatches(store.contacts, ownerId, first, 2)) walked.push(...batch.changes);
    const all = await readChangeBatch(store.contacts, ownerId, start, 100);
    expect(walked).toEqual(all.changes);
  });

  it('refuses a token the log cannot follow with the feed’s 410: expired, or ahead of the log', async () => {
    const feed = { contacts: store.contacts, retentionMs: RETENTION_MS };
    const now = Date.now();
    const expired = token({ issuedAt: now - RETENTION_MS - 1 });
    const { log } = await readChangeBatch(store.contacts, ownerId, start, 1);
    const ahead = token({ seq: log.currentSeq + 1 });
    for (const refused of [
      () => readChangesAfterToken(feed, ownerId, expired, 10, now),
      () => changeLogForToken(feed, ownerId, ahead, now),
    ]) {
      const failure = await refused().then(
        () => null,
        (error: unknown) => error,
      );
      expect(failure).toBeInstanceOf(PublicError);
      expect(failure).toMatchObject({ status: 410, message: SYNC_TOKEN_EXPIRED_MESSAGE });
    }
  });

  describe('readEndpointBatch: the webhook dispatcher’s read', () => {
    const endpoint = (pendingSince: string, failedAttempts = 0) => ({ ownerId, cursor: start, pendingSince, failedAttempts });

    it('reads the batch after the cursor and the change after it, with since when changes wait', async () => {
      const now = Date.now();
      const read = await readEndpointBatch(store.contacts, endpoint('2000-01-01T00:00:00.000Z'), 2, {
        now: () => now,
        retentionMs: RETENTION_MS,
      });
      expect(read.changes).toHaveLength(2);
      expect(read.next).toBeDefined();
      expect(read.startedAt).toBe(now);
      // A quiet endpoint's changes wait since its first change, not since it was last caught up.
      expect(read.pendingSince).toBe(read.changes[0]!.changedAt);
      expect(read.pastRetention).toBe(false);
      expect(await countChangesWaiting(store.contacts, endpoint(read.pendingSince))).toBe(5);
    });

    it('an endpoint that failed keeps its pendingSince, and is past the retention once that is older than the log keeps', async () => {
      const now = Date.now();
      const old = new Date(now - RETENTION_MS - 1).toISOString();
      const read = await readEndpointBatch(store.contacts, endpoint(old, 1), 2, { now: () => now, retentionMs: RETENTION_MS });
      expect(read.pendingSince).toBe(old);
      expect(read.pastRetention).toBe(true);
    });

    it('with nothing waiting, nothing is lost: pendingSince is the read’s time', async () => {
      const now = Date.now();
      const { log } = await readChangeBatch(store.contacts, ownerId, start, 1);
      const caughtUp = { ...endpoint('2000-01-01T00:00:00.000Z'), cursor: { seq: log.currentSeq, after: null } };
      const read = await readEndpointBatch(store.contacts, caughtUp, 2, { now: () => now, retentionMs: RETENTION_MS });
      expect(read.changes).toEqual([]);
      expect(read.next).toBeUndefined();
      expect(read.pendingSince).toBe(new Date(now).toISOString());
      expect(read.pastRetention).toBe(false);
    });
  });
});
