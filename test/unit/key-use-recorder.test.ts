import { describe, expect, it, vi } from 'vitest';
import { KeyUseRecorder, MAX_DEFERRED_KEYS, type KeyUse } from '../../src/store/key-use-recorder.js';

const RETRY_MS = 5;

/** A database that records uses only while not busy, and remembers every attempt. */
function fakeDatabase() {
  const recorded = new Map<string, string>();
  const attempts: KeyUse[][] = [];
  let busy = false;
  let failing = false;
  return {
    recorded,
    attempts,
    setBusy: (value: boolean) => void (busy = value),
    setFailing: (value: boolean) => void (failing = value),
    async recordNow(uses: KeyUse[]): Promise<KeyUse[]> {
      attempts.push(uses);
      if (failing) throw new Error('database down');
      if (busy) return uses;
      for (const use of uses) recorded.set(use.keyId, use.usedAt);
      return [];
    },
  };
}

const use = (keyId: string, usedAt: string): KeyUse => ({ keyId, usedAt, unlessUsedAfter: '2024-01-01T00:00:00.000Z' });

describe('KeyUseRecorder', () => {
  it('records at once when the database is free', async () => {
    const db = fakeDatabase();
    const recorder = new KeyUseRecorder((uses) => db.recordNow(uses), RETRY_MS);
    await recorder.record(use('a', '2024-05-01T10:00:00.000Z'));
    expect(db.recorded.get('a')).toBe('2024-05-01T10:00:00.000Z');
    await recorder.close();
  });

  it('keeps a use the database was too busy for, and writes it with its own time once the database is free', async () => {
    const db = fakeDatabase();
    const recorder = new KeyUseRecorder((uses) => db.recordNow(uses), RETRY_MS);
    db.setBusy(true);
    await recorder.record(use('a', '2024-05-01T10:00:00.000Z'));
    expect(db.recorded.size).toBe(0);
    await vi.waitFor(async () => expect(db.attempts.length).toBeGreaterThanOrEqual(3), { timeout: 5_000, interval: 25 });
    db.setBusy(false);
    await vi.waitFor(async () => expect(db.recorded.get('a')).toBe('2024-05-01T10:00:00.000Z'), { timeout: 5_000, interval: 25 });
    await recorder.close();
  });

  it('retries the latest use per key only, in one attempt for all keys', async () => {
    const db = fakeDatabase();
    const recorder = new KeyUseRecorder((uses) => db.recordNow(uses), 60_000);
    db.setBusy(true);
    await recorder.record(use('a', '2024-05-01T10:01:00.000Z'));
    await recorder.record(use('a', '2024-05-01T10:00:00.000Z'));
    await recorder.record(use('b', '2024-05-01T10:00:00.000Z'));
    await recorder.record(use('a', '2024-05-01T10:02:00.000Z'));
    db.setBusy(false);
    await recorder.close();
    expect(db.attempts.at(-1)!.map((left) => [left.keyId, left.usedAt])).toEqual([
      ['b', '2024-05-01T10:00:00.000Z'],
      ['a', '2024-05-01T10:02:00.000Z'],
    ]);
    expect(db.recorded.get('a')).toBe('2024-05-01T10:02:00.000Z');
  });

  it(`keeps at most ${MAX_DEFERRED_KEYS} keys waiting, forgetting the oldest`, async () => {
    const db = fakeDatabase();
    const recorder = new KeyUseRecorder((uses) => db.recordNow(uses), 60_000);
    db.setBusy(true);
    for (let key = 0; key <= MAX_DEFERRED_KEYS; key += 1) await recorder.record(use(`key-${key}`, '2024-05-01T10:00:00.000Z'));
    db.setBusy(false);
    await recorder.close();
    expect(db.recorded.size).toBe(MAX_DEFERRED_KEYS);
    expect(db.recorded.has('key-0')).toBe(false);
    expect(db.recorded.has(`key-${MAX_DEFERRED_KEYS}`)).toBe(true);
  });

  it('passes a first failure to the caller, and drops the uses of a retry that fails', async () => {
    const db = fakeDatabase();
    const recorder = new KeyUseRecorder((uses) => db.recordNow(uses), RETRY_MS);
    db.setFailing(true);
    await expect(recorder.record(use('a', '2024-05-01T10:00:00.000Z'))).rejects.toThrow('database down');
    db.setFailing(false);
    db.setBusy(true);
    await recorder.record(use('b', '2024-05-01T10:00:00.000Z'));
    db.setFailing(true);
    await vi.waitFor(async () => expect(db.attempts.length).toBeGreaterThanOrEqual(3), { timeout: 5_000, interval: 25 });
    const attempts = db.attempts.length;
    db.setFailing(false);
    db.setBusy(false);
    await recorder.close();
    expect(db.attempts.length).toBe(attempts);
    expect(db.recorded.size).toBe(0);
  });

  it('stops retrying once closed, after one last attempt', async () => {
    const db = fakeDatabase();
    const recorder = new KeyUseRecorder((uses) => db.recordNow(uses), RETRY_MS);
    db.setBusy(true);
    await recorder.record(use('a', '2024-05-01T10:00:00.000Z'));
    await recorder.close();
    const attempts = db.attempts.length;
    await new Promise((resolve) => setTimeout(resolve, RETRY_MS * 10));
    expect(db.attempts.length).toBe(attempts);
  });
});
