import { describe, expect, it } from 'vitest';
import {
  assertTokenFollowable,
  assertTokenOwner,
  decodeSyncToken,
  encodeSyncToken,
  looksLikeTime,
  parseChangesRequest,
  parseChangesTime,
  SYNC_TOKEN_EXPIRED_MESSAGE,
  type SyncToken,
} from '../../src/domain/changes.js';
import { InputError, PublicError } from '../../src/domain/errors.js';
import { ServiceKey } from '../../src/domain/service-key.js';
import { pruneChangesOnce } from '../../src/store/change-pruning.js';
import { thrown } from '../support/thrown.js';

const OWNER = '0190a3c4-0000-7000-8000-00000000000a';
const CONTACT = '0190a3c4-0000-7000-8000-000000000001';
const NOW = Date.parse('2026-11-24T00:00:00.000Z');
const DAY = 86_400_000;
const KEY = new ServiceKey('a'.repeat(64));
const token = (overrides: Partial<SyncToken> = {}): SyncToken => ({
  ownerId: OWNER,
  seq: 42,
  after: null,
  issuedAt: NOW,
  listedThrough: null,
  ...overrides,
});
const LISTED = { created_at: '2026-11-24 10:00:00.123456+00', id: CONTACT };
/** A token's fields as the service writes them, base64url JSON, re-encoded by someone else. */
const edited = (text: string, edit: (fields: unknown[]) => unknown[]) => {
  const [keyId, payload, signature] = text.split('.');
  const fields = JSON.parse(Buffer.from(payload!, 'base64url').toString()) as unknown[];
  return `${keyId}.${Buffer.from(JSON.stringify(edit(fields))).toString('base64url')}.${signature}`;
};
const EXPIRED = { status: 410, message: SYNC_TOKEN_EXPIRED_MESSAGE };

describe('sync tokens', () => {
  it('round-trip, with and without a contact to continue after, and within a walk of the listing', () => {
    for (const original of [token(), token({ after: CONTACT, seq: 0 }), token({ listedThrough: LISTED })]) {
      const text = encodeSyncToken(original, KEY);
      expect(text).toMatch(/^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/);
      expect(decodeSyncToken(text, KEY)).toEqual(original);
    }
  });

  it('refuses anything this API did not issue, naming "since"', () => {
    for (const text of [
      '',
      'x',
      '!!!',
      Buffer.from('not.a.token.at-all').toString('base64url'),
      'A'.repeat(500),
      '0.0.0',
      'abcdefgh.a.b',
      `zzzzzzzz.${Buffer.from('[1,2]').toString('base64url')}.sig`,
    ]) {
      expect(() => decodeSyncToken(text, KEY), text).toThrow(
        new InputError('Query parameter "since" must be 0 or a next_since token this API returned'),
      );
    }
  });

  it('refuses an edited token with 400: a later issue time, another position, another owner, a moved walk', () => {
    const text = encodeSyncToken(token({ listedThrough: LISTED }), KEY);
    const edits = [
      (fields: unknown[]) => fields.with(3, NOW + 365 * DAY),
      (fields: unknown[]) => fields.with(1, 41),
      (fields: unknown[]) => fields.with(0, 'b'.repeat(32)),
      (fields: unknown[]) => fields.with(4, '2026-11-25 10:00:00+00'),
      (fields: unknown[]) => fields.slice(0, 4),
    ];
    for (const edit of edits) {
      expect(() => decodeSyncToken(edited(text, edit), KEY)).toThrow(
        new InputError(
          'Query parameter "since" was altered (its signature does not match): pass next_since exactly as this API returned it',
        ),
      );
    }
    const [keyId, payload] = text.split('.');
    expect(() => decodeSyncToken(`${keyId}.${payload}`, KEY)).toThrow(/carries no signature/);
    expect(() => decodeSyncToken(`${keyId}.${payload}.`, KEY)).toThrow(/carries no signature/);
  });

  it('answers 410 for a token signed with another key (another database) or issued before tokens were signed', () => {
    const otherDatabase = encodeSyncToken(token(), new ServiceKey('b'.repeat(64)));
    const beforeSigning = Buffer.from(`${OWNER.replaceAll('-', '')}.42..${NOW}`).toString('base64url');
    for (const text of [otherDatabase, beforeSigning]) expect(thrown(() => decodeSyncToken(text, KEY))).toMatchObject(EXPIRED);
  });

  it('names the since of the door that reads it (the REST query parameter by default)', () => {
    const argument = { name: '"since"', accepted: '"0", a token or a time' };
    expect(() => decodeSyncToken('nonsense', KEY)).toThrow('Query parameter "since" must be 0 or a next_since token this API returned');
    expect(() => decodeSyncToken('nonsense', KEY, argument)).toThrow(/^"since" must be "0", a token or a time$/);
    const [keyId, payload] = encodeSyncToken(token(), KEY).split('.');
    expect(() => decodeSyncToken(`${keyId}.${payload}`, KEY, argument)).toThrow(/^"since" carries no signature/);
    expect(() => assertTokenOwner(token(), '0190a3c4-0000-7000-8000-00000000000b', argument)).toThrow(
      /^"since" is a token of another API key's network$/,
    );
  });

  it('tells a time from a token, and reads a time with a zone that is not in the future', () => {
    for (const text of [encodeSyncToken(token(), KEY), encodeSyncToken(token({ listedThrough: LISTED }), KEY), '0']) {
      expect(looksLikeTime(text), text).toBe(false);
    }
    expect(looksLikeTime('2026-11-21')).toBe(true);
    expect(parseChangesTime('since', '2026-11-21T00:00:00Z', NOW)).toBe(Date.parse('2026-11-21T00:00:00Z'));
    expect(parseChangesTime('since', '2026-11-21T02:00:00+02:00', NOW)).toBe(Date.parse('2026-11-21T00:00:00Z'));
    expect(() => parseChangesTime('since', '2026-11-21T00:00:00', NOW)).toThrow(/^since must be an ISO 8601 date-time with a time zone/);
    expect(() => parseChangesTime('since', '2026-11-25T00:00:00Z', NOW)).toThrow(/^since must not be in the future/);
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
      const failure = thrown(() => assertTokenFollowable(tok, log, 30 * DAY, now));
      expect(failure).toBeInstanceOf(PublicError);
      expect(failure).toMatchObject(EXPIRED);
    }
  });

  it('reads limit strictly, 1 to 1000, default 100, and no other parameter', () => {
    expect(parseChangesRequest({})).toEqual({ since: null, limit: 100 });
    expect(parseChangesRequest({ limit: '1000', since: '0' })).toEqual({ since: '0', limit: 1000 });
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
