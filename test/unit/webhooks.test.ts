import { describe, expect, it } from 'vitest';
import { parseDuration } from '../../src/domain/duration.js';
import { InputError } from '../../src/domain/errors.js';
import {
  cursorAfterBatch,
  DEFAULT_WEBHOOK_RETRY_SCHEDULE,
  isPastRetention,
  parseRetrySchedule,
  pendingSinceOf,
  RETRY_JITTER,
  retryDelay,
  webhookEventId,
  webhookEventType,
} from '../../src/domain/webhooks.js';
import { webhookEventJson } from '../../src/operations/change-json.js';
import { POSTGRES_DIALECT } from '../../src/store/postgres/dialect.js';
import { SQLITE_DIALECT } from '../../src/store/sqlite/dialect.js';
import { deliversWebhooks } from '../../src/webhooks/start-dispatcher.js';
import { expectInputError, thrown } from '../support/thrown.js';

const WEBHOOK = '0190a3c4-0000-7000-8000-0000000000aa';
const CONTACT = '0190a3c4-0000-7000-8000-000000000001';
const OTHER = '0190a3c4-0000-7000-8000-000000000002';
const DAY = 86_400_000;
const NOW = Date.parse('2026-11-24T00:00:00.000Z');
const iso = (ms: number) => new Date(ms).toISOString();

describe('webhookEventId', () => {
  it('is msg_ and 26 base64url characters, the same for the same change of the same endpoint', () => {
    const id = webhookEventId(WEBHOOK, CONTACT, 42);
    expect(id).toMatch(/^msg_[A-Za-z0-9_-]{26}$/);
    expect(webhookEventId(WEBHOOK, CONTACT, 42)).toBe(id);
  });

  it('differs for another endpoint, another contact and the same contact’s next change', () => {
    const ids = new Set([
      webhookEventId(WEBHOOK, CONTACT, 42),
      webhookEventId(OTHER, CONTACT, 42),
      webhookEventId(WEBHOOK, OTHER, 42),
      webhookEventId(WEBHOOK, CONTACT, 43),
      // The separator keeps fields apart: "a\0bc" is not "ab\0c".
      webhookEventId(`${WEBHOOK}1`, CONTACT.slice(1), 42),
    ]);
    expect(ids.size).toBe(5);
  });
});

describe('webhookEventType', () => {
  it('names the change by the contact’s state now, as the change feed does', () => {
    expect(webhookEventType('listable')).toBe('contact.upserted');
    expect(webhookEventType('merged')).toBe('contact.merged');
    expect(webhookEventType('gone')).toBe('contact.deleted');
  });
});

describe('webhookEventJson', () => {
  const changedAt = '2026-11-23T10:00:00.000Z';
  it('wraps the change exactly as the feed gives it, with its type and changed_at', () => {
    const upsert = { contactId: CONTACT, seq: 3, changedAt, state: { kind: 'listable' as const, json: '{"id":"x","name":"A"}' } };
    expect(webhookEventJson(upsert)).toBe(
      `{"type":"contact.upserted","timestamp":"${changedAt}","data":{"type":"upsert","id":"${CONTACT}","changed_at":"${changedAt}","contact":{"id":"x","name":"A"}}}`,
    );
    const merge = {
      contactId: CONTACT,
      seq: 3,
      changedAt,
      state: { kind: 'merged' as const, mergedInto: OTHER, name: 'Ada', mergedIntoName: 'Ada L.' },
    };
    expect(JSON.parse(webhookEventJson(merge))).toEqual({
      type: 'contact.merged',
      timestamp: changedAt,
      data: { type: 'merge', id: CONTACT, changed_at: changedAt, merged_into: OTHER },
    });
    const gone = { contactId: CONTACT, seq: 3, changedAt, state: { kind: 'gone' as const, name: 'Ada' } };
    expect(JSON.parse(webhookEventJson(gone))).toEqual({
      type: 'contact.deleted',
      timestamp: changedAt,
      data: { type: 'delete', id: CONTACT, changed_at: changedAt },
    });
  });
});

describe('parseRetrySchedule', () => {
  it('reads the default as nine waits adding up to more than 72 hours', () => {
    const schedule = parseRetrySchedule(DEFAULT_WEBHOOK_RETRY_SCHEDULE);
    expect(schedule).toEqual([5_000, 300_000, 1_800_000, 7_200_000, 18_000_000, 36_000_000, 50_400_000, 72_000_000, 86_400_000]);
    expect(schedule.reduce((sum, wait) => sum + wait, 0)).toBeGreaterThanOrEqual(72 * 3_600_000);
  });

  it('takes milliseconds (tests) and spaces around the commas', () => {
    expect(parseRetrySchedule('50ms, 50ms ,1s')).toEqual([50, 50, 1000]);
    expect(parseRetrySchedule('2d')).toEqual([2 * DAY]);
  });

  it.each([
    ['', 'Retry 1 of the schedule is empty; list durations separated by commas, like 5s,5m,30m'],
    ['5s,,5m', 'Retry 2 of the schedule is empty; list durations separated by commas, like 5s,5m,30m'],
    ['5s,', 'Retry 2 of the schedule is empty; list durations separated by commas, like 5s,5m,30m'],
    ['5s,5x', 'Retry 2 of the schedule: Invalid duration "5x"; use a positive number followed by ms, s, m, h or d (e.g. 500ms, 30s, 90d)'],
    ['0s', 'Retry 1 of the schedule: Invalid duration "0s"; use a positive number followed by ms, s, m, h or d (e.g. 500ms, 30s, 90d)'],
    [
      '5s 5m',
      'Retry 1 of the schedule: Invalid duration "5s 5m"; use a positive number followed by ms, s, m, h or d (e.g. 500ms, 30s, 90d)',
    ],
  ])('refuses %j naming the entry', (text, message) => {
    expectInputError(() => parseRetrySchedule(text), message);
  });

  it('refuses more than 100 waits', () => {
    expect(thrown(() => parseRetrySchedule(Array(101).fill('1s').join(',')))).toBeInstanceOf(InputError);
    expect(parseRetrySchedule(Array(100).fill('1s').join(','))).toHaveLength(100);
  });

  it('leaves parseDuration without milliseconds where they are not asked for (key lifetimes)', () => {
    expect(thrown(() => parseDuration('50ms'))).toBeInstanceOf(InputError);
    expect(parseDuration('50ms', { milliseconds: true })).toBe(50);
  });
});

describe('retryDelay', () => {
  const schedule = [1000, 60_000];
  it('waits the schedule’s entry for the failed attempt, jittered by ±20 %', () => {
    expect(retryDelay(schedule, 1, () => 0.5)).toBe(1000);
    expect(retryDelay(schedule, 1, () => 0)).toBe(1000 * (1 - RETRY_JITTER));
    expect(retryDelay(schedule, 2, () => 0.999_999)).toBe(Math.round(60_000 * (1 + RETRY_JITTER)));
  });

  it('stays within the jitter for any random value', () => {
    for (let index = 0; index < 1000; index += 1) {
      const delay = retryDelay(schedule, 2, Math.random)!;
      expect(delay).toBeGreaterThanOrEqual(48_000);
      expect(delay).toBeLessThanOrEqual(72_000);
    }
  });

  it('is null once the schedule is spent: the endpoint is disabled', () => {
    expect(retryDelay(schedule, 3, () => 0.5)).toBeNull();
    expect(retryDelay([], 1, () => 0.5)).toBeNull();
  });
});

describe('isPastRetention', () => {
  const retentionMs = 30 * DAY;
  const endpoint = (waitedMs: number, seq = 10) => ({ pendingSince: iso(NOW - waitedMs), cursor: { seq } });
  it('is true once changes waited longer than the retention', () => {
    expect(isPastRetention(endpoint(30 * DAY), null, NOW, retentionMs)).toBe(false);
    expect(isPastRetention(endpoint(30 * DAY + 1), null, NOW, retentionMs)).toBe(true);
  });

  it('is true when the log is no longer complete from the cursor on (TRUNCATE)', () => {
    expect(isPastRetention(endpoint(0, 10), { changesFrom: 10 }, NOW, retentionMs)).toBe(false);
    expect(isPastRetention(endpoint(0, 9), { changesFrom: 10 }, NOW, retentionMs)).toBe(true);
  });
});

describe('pendingSinceOf', () => {
  const first = { seq: 11, contactId: CONTACT, changedAt: iso(NOW - DAY) };
  it('takes the first waiting change when the endpoint was idle since it was last caught up', () => {
    expect(pendingSinceOf({ pendingSince: iso(NOW - 40 * DAY), failedAttempts: 0 }, first)).toBe(first.changedAt);
  });

  it('keeps pendingSince after a failure, or when it is the later bound, or nothing waits', () => {
    expect(pendingSinceOf({ pendingSince: iso(NOW - 40 * DAY), failedAttempts: 1 }, first)).toBe(iso(NOW - 40 * DAY));
    expect(pendingSinceOf({ pendingSince: iso(NOW), failedAttempts: 0 }, first)).toBe(iso(NOW));
    expect(pendingSinceOf({ pendingSince: iso(NOW - 40 * DAY), failedAttempts: 0 }, undefined)).toBe(iso(NOW - 40 * DAY));
  });
});

describe('cursorAfterBatch', () => {
  const change = (index: number) => ({ seq: 5, contactId: `c${index}`, changedAt: iso(NOW - 1000 + index) });
  const batch = [change(0), change(1), change(2)];
  const now = iso(NOW);

  it('goes to the log’s end when the whole batch was done and nothing was read after it', () => {
    expect(cursorAfterBatch(batch, 3, undefined, 9, now)).toEqual({ cursor: { seq: 9, after: null }, pendingSince: now });
    expect(cursorAfterBatch([], 0, undefined, 9, now)).toEqual({ cursor: { seq: 9, after: null }, pendingSince: now });
  });

  it('stops after the last change done when more was read, changes waiting since the next one', () => {
    const next = change(3);
    expect(cursorAfterBatch(batch, 3, next, 9, now)).toEqual({ cursor: { seq: 5, after: 'c2' }, pendingSince: next.changedAt });
  });

  it('never passes a change that was not done: the failed head waits, the changes after it are sent again', () => {
    expect(cursorAfterBatch(batch, 1, undefined, 9, now)).toEqual({ cursor: { seq: 5, after: 'c0' }, pendingSince: batch[1]!.changedAt });
    expect(cursorAfterBatch(batch, 0, undefined, 9, now)).toBeNull();
  });
});

describe('deliversWebhooks: which processes run the dispatcher', () => {
  const postgres = { dialect: POSTGRES_DIALECT };
  const sqlite = { dialect: SQLITE_DIALECT };
  it('every process on PostgreSQL, whose leases share the endpoints out', () => {
    expect(deliversWebhooks(postgres, { deliversWebhooks: false })).toBe(true);
    expect(deliversWebhooks(postgres, undefined)).toBe(true);
  });

  it('on SQLite, the one worker given the role, or a server running alone', () => {
    expect(deliversWebhooks(sqlite, { deliversWebhooks: true })).toBe(true);
    expect(deliversWebhooks(sqlite, { deliversWebhooks: false })).toBe(false);
    expect(deliversWebhooks(sqlite, undefined)).toBe(true);
  });
});
