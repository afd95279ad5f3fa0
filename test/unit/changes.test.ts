import { describe, expect, it } from 'vitest';
import {
  assertTokenFollowable,
  assertTokenOwner,
  decodeSyncToken,
  encodeSyncToken,
  parseChangesRequest,
  SYNC_TOKEN_EXPIRED_MESSAGE,
  type SyncToken,
} from '../../src/domain/changes.js';
import { InputError, PublicError } from '../../src/domain/errors.js';
import { pruneChangesOnce } from '../../src/store/change-pruning.js';

const OWNER = '0190a3c4-0000-7000-8000-00000000000a';
const CONTACT = '0190a3c4-0000-7000-8000-000000000001';
const NOW = Date.parse('2026-11-24T00:00:00.000Z');
const DAY = 86_400_000;
const token = (overrides: Partial<SyncToken> = {}): SyncToken => ({ ownerId: OWNER, seq: 42, after: null, issuedAt: NOW, ...overrides });

describe('sync tokens', () => {
  it('round-trip, with and without a contact to continue after', () => {
    for (const original of [token(), token({ after: CONTACT, seq: 0 })]) {
      const text = encodeSyncToken(original);
      expect(text).toMatch(/^[A-Za-z0-9_-]+$/);
      expect(decodeSyncToken(text)).toEqual(original);
    }
  });

  it('refuses anything this API did not issue, naming "since"', () => {
    for (const text of ['', 'x', '!!!', Buffer.from('not.a.token.at-all').toString('base64url'), 'A'.repeat(500)]) {
      expect(() => decodeSyncToken(text), text).toThrow(
        new InputError('Query parameter "since" must be a next_since token this API returned'),
      );
    }
  });

  it("refuses another owner's token with 400", () => {
    expect(() => assertTokenOwner(token(), '0190a3c4-0000-7000-8000-00000000000b')).toThrow(InputError);
    expect(() => assertTokenOwner(token(), OWNER.toUpperCase())).not.toThrow();
  });

  it('answers 410 past the retention, before the log is complete, or ahead of the log', () => {
    const log = { currentSeq: 50, changesFrom: 10 };
    expect(() => assertTokenFollowable(token(), log, 30 * DAY, NOW + 30 * DAY)).not.toThrow();
    for (const [tok, now] of [
      [token(), NOW + 30 * DAY + 1],
      [token({ seq: 9 }), NOW],
      [token({ seq: 51 }), NOW],
    ] as const) {
      const failure = (() => {
        try {
          assertTokenFollowable(tok, log, 30 * DAY, now);
        } catch (error) {
          return error;
        }
        return null;
      })();
      expect(failure).toBeInstanceOf(PublicError);
      expect(failure).toMatchObject({ status: 410, message: SYNC_TOKEN_EXPIRED_MESSAGE });
    }
  });

  it('reads limit strictly, 1 to 1000, default 100, and no other parameter', () => {
    expect(parseChangesRequest({})).toEqual({ since: null, limit: 100 });
    expect(parseChangesRequest({ limit: '1000', since: encodeSyncToken(token()) })).toEqual({ since: token(), limit: 1000 });
    for (const limit of ['0', '1001', '1e2', '+5', '', '1.0']) expect(() => parseChangesRequest({ limit }), limit).toThrow(/"limit"/);
    expect(() => parseChangesRequest({ limit: ['1', '2'] })).toThrow('Query parameter "limit" must be given at most once');
    expect(() => parseChangesRequest({ owner_id: OWNER })).toThrow(/"owner_id"/);
  });
});

describe('pruning the change log', () => {
  it('removes what is older than the retention plus a day, in batches of 1000, at most 20 per run', async () => {
    const calls: [string, number][] = [];
    let left = 25_500;
    const store = {
      pruneChanges: async (before: string, maxRows: number) => {
        calls.push([before, maxRows]);
        const removed = Math.min(left, maxRows);
        left -= removed;
        return removed;
      },
    };
    expect(await pruneChangesOnce(store, 30, NOW)).toBe(20_000);
    expect(calls).toHaveLength(20);
    expect(calls[0]).toEqual([new Date(NOW - 31 * DAY).toISOString(), 1000]);
    expect(await pruneChangesOnce(store, 30, NOW)).toBe(5_500);
    expect(calls).toHaveLength(26);
  });
});
