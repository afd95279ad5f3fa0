import { expect, it } from 'vitest';
import { pruneOAuthRecordsOnce } from '../../src/store/change-pruning.js';
import type { OAuthRecord } from '../../src/store/store.js';
import { describeEachBackend } from '../support/backends.js';

const NOW = Date.parse('2026-01-01T00:00:00.000Z');
const iso = (offsetMs: number) => new Date(NOW + offsetMs).toISOString();
const record = (kind: string, idHash: string, overrides: Partial<OAuthRecord> = {}): OAuthRecord => ({
  kind,
  idHash,
  payload: JSON.stringify({ kind, idHash }),
  grantId: null,
  accountId: null,
  uidHash: null,
  expiresAt: iso(60_000),
  ...overrides,
});

/** The embedded authorization server's storage, the same on both databases (src/oauth/store-adapter.ts hashes for it). */
describeEachBackend('OAuth store', (db) => {
  it('saves, finds until expiry, overwrites, consumes once and destroys', async () => {
    const { oauth } = db().store;
    await oauth.save(record('AccessToken', 'a1'));
    expect(await oauth.find('AccessToken', 'a1', iso(0))).toEqual({ payload: '{"kind":"AccessToken","idHash":"a1"}', consumedAt: null });
    expect(await oauth.find('RefreshToken', 'a1', iso(0))).toBeNull();
    expect(await oauth.find('AccessToken', 'a1', iso(60_000))).toBeNull();
    await oauth.save(record('AccessToken', 'a1', { payload: '{"v":2}' }));
    expect((await oauth.find('AccessToken', 'a1', iso(0)))!.payload).toBe('{"v":2}');
    await oauth.consume('AccessToken', 'a1', iso(1_000));
    await oauth.consume('AccessToken', 'a1', iso(2_000));
    expect((await oauth.find('AccessToken', 'a1', iso(0)))!.consumedAt).toBe(iso(1_000));
    await oauth.destroy('AccessToken', 'a1');
    expect(await oauth.find('AccessToken', 'a1', iso(0))).toBeNull();
  });

  it('finds sessions by uid, and revoking a grant removes everything issued under it', async () => {
    const { oauth } = db().store;
    await oauth.save(record('Session', 's1', { uidHash: 'u1' }));
    expect((await oauth.findByUid('Session', 'u1', iso(0)))!.payload).toContain('s1');
    await oauth.save(record('AccessToken', 'g-a', { grantId: 'g1' }));
    await oauth.save(record('RefreshToken', 'g-r', { grantId: 'g1' }));
    await oauth.save(record('AccessToken', 'other', { grantId: 'g2' }));
    await oauth.revokeGrant('g1');
    expect(await oauth.find('AccessToken', 'g-a', iso(0))).toBeNull();
    expect(await oauth.find('RefreshToken', 'g-r', iso(0))).toBeNull();
    expect(await oauth.find('AccessToken', 'other', iso(0))).not.toBeNull();
  });

  it('holds the secrets the migration made: random, distinct, and the same for every reader', async () => {
    const { oauth } = db().store;
    const values = await Promise.all(['cookie-key', 'csrf-key', 'signing-seed'].map((name) => oauth.secret(name)));
    for (const value of values) expect(value).toMatch(/^[0-9a-f]{64}$/);
    expect(new Set(values).size).toBe(3);
    expect(await oauth.secret('cookie-key')).toBe(values[0]);
    await expect(oauth.secret('no-such-secret')).rejects.toThrow('OAuth secret "no-such-secret" is missing: run the database migrations');
  });

  it('prunes expired records only', async () => {
    const { store } = db();
    await store.oauth.save(record('Interaction', 'old', { expiresAt: iso(-1) }));
    await store.oauth.save(record('Interaction', 'live', { expiresAt: iso(3_600_000) }));
    expect(await pruneOAuthRecordsOnce(store, NOW)).toBeGreaterThanOrEqual(1);
    expect(await store.oauth.find('Interaction', 'old', iso(-10))).toBeNull();
    expect(await store.oauth.find('Interaction', 'live', iso(0))).not.toBeNull();
  });
});
