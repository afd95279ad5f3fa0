import { randomUUID } from 'node:crypto';
import { expect, it } from 'vitest';
import { IDEMPOTENCY_WINDOW_MS } from '../../src/domain/idempotency.js';
import { pruneIdempotencyKeysOnce } from '../../src/store/change-pruning.js';
import type { IdempotencyKey } from '../../src/store/store.js';
import { describeEachBackend } from '../support/backends.js';
import { createUser } from '../support/seed.js';

const NOW = Date.parse('2026-01-01T00:00:00.000Z');
const at = (offsetMs: number) => new Date(NOW + offsetMs).toISOString();
const newKey = (scope = 'POST /admin/v1/users/u1/keys'): IdempotencyKey => ({ scope, key: randomUUID() });

/** Idempotency-Keys as the admin API keeps them (Stripe's semantics), the same on both databases. */
describeEachBackend('Store contract: Idempotency-Keys', (db) => {
  it('the first claim runs the request; the same request meanwhile is in progress, another is a mismatch', async () => {
    const { idempotency } = db().store;
    const key = newKey();
    expect(await idempotency.claim(key, 'body-a', at(0))).toEqual({ state: 'claimed' });
    expect(await idempotency.claim(key, 'body-a', at(1))).toEqual({ state: 'in_progress' });
    expect(await idempotency.claim(key, 'body-b', at(1))).toEqual({ state: 'mismatch' });
  });

  it('once complete, the same request replays the first answer, another is a mismatch; a second completion changes nothing', async () => {
    const { idempotency } = db().store;
    const key = newKey();
    await idempotency.claim(key, 'body-a', at(0));
    await idempotency.complete(key, { status: 201, body: '{"id":"k1","key":"cnt_live_…"}', ownerId: null }, at(10));
    await idempotency.complete(key, { status: 500, body: '{"error":"late"}', ownerId: null }, at(20));
    expect(await idempotency.claim(key, 'body-a', at(30))).toEqual({
      state: 'replay',
      status: 201,
      body: '{"id":"k1","key":"cnt_live_…"}',
    });
    expect(await idempotency.claim(key, 'body-b', at(30))).toEqual({ state: 'mismatch' });
  });

  it('a key is its own within each scope', async () => {
    const { idempotency } = db().store;
    const key = newKey('POST /admin/v1/users');
    await idempotency.claim(key, 'body-a', at(0));
    expect(await idempotency.claim({ ...key, scope: 'POST /admin/v1/users/u2/keys' }, 'body-b', at(0))).toEqual({ state: 'claimed' });
  });

  it('a released claim (the request failed) is free again; a completed one is never released', async () => {
    const { idempotency } = db().store;
    const key = newKey();
    await idempotency.claim(key, 'body-a', at(0));
    await idempotency.release(key);
    expect(await idempotency.claim(key, 'body-b', at(1))).toEqual({ state: 'claimed' });
    await idempotency.complete(key, { status: 200, body: '{}', ownerId: null }, at(2));
    await idempotency.release(key);
    expect(await idempotency.claim(key, 'body-b', at(3))).toEqual({ state: 'replay', status: 200, body: '{}' });
  });

  it('a key holds for the window from its claim; after it, a claim takes it afresh', async () => {
    const { idempotency } = db().store;
    const key = newKey();
    await idempotency.claim(key, 'body-a', at(0));
    await idempotency.complete(key, { status: 201, body: '{"first":true}', ownerId: null }, at(10));
    expect(await idempotency.claim(key, 'body-b', at(IDEMPOTENCY_WINDOW_MS - 1))).toEqual({ state: 'mismatch' });
    expect(await idempotency.claim(key, 'body-b', at(IDEMPOTENCY_WINDOW_MS + 1))).toEqual({ state: 'claimed' });
    expect(await idempotency.claim(key, 'body-b', at(IDEMPOTENCY_WINDOW_MS + 2))).toEqual({ state: 'in_progress' });
  });

  it('of 20 concurrent claims of one key, exactly one runs the request', async () => {
    const { idempotency } = db().store;
    const key = newKey();
    const claims = await Promise.all(Array.from({ length: 20 }, () => idempotency.claim(key, 'body-a', at(0))));
    expect(claims.filter((claim) => claim.state === 'claimed')).toHaveLength(1);
    expect(claims.filter((claim) => claim.state === 'in_progress')).toHaveLength(19);
  });

  it('of 20 concurrent claims of a key whose window passed, exactly one takes it', async () => {
    const { idempotency } = db().store;
    const key = newKey();
    await idempotency.claim(key, 'body-a', at(0));
    const later = at(IDEMPOTENCY_WINDOW_MS + 1);
    const claims = await Promise.all(Array.from({ length: 20 }, (_, index) => idempotency.claim(key, `body-${index % 2}`, later)));
    const claimed = claims.filter((claim) => claim.state === 'claimed');
    expect(claimed).toHaveLength(1);
    expect(claims.filter((claim) => claim.state !== 'claimed').every((claim) => ['in_progress', 'mismatch'].includes(claim.state))).toBe(
      true,
    );
  });

  it('a claim of the same request left unanswered before staleBefore is taken over; a fresh one, a completed one or another body’s is not', async () => {
    const { idempotency } = db().store;
    const [stale, fresh, answered] = [newKey(), newKey(), newKey()];
    for (const key of [stale, fresh, answered]) await idempotency.claim(key, 'body-a', at(0));
    await idempotency.complete(answered, { status: 201, body: '{}', ownerId: null }, at(5));
    const staleBefore = at(20_000);
    expect(await idempotency.claim(stale, 'body-b', at(30_000), staleBefore)).toEqual({ state: 'mismatch' });
    expect(await idempotency.claim(stale, 'body-a', at(30_000), staleBefore)).toEqual({ state: 'claimed' });
    expect(await idempotency.claim(stale, 'body-a', at(30_001), staleBefore)).toEqual({ state: 'in_progress' });
    expect(await idempotency.claim(fresh, 'body-a', at(10_000), at(-1))).toEqual({ state: 'in_progress' });
    expect(await idempotency.claim(answered, 'body-a', at(30_000), staleBefore)).toEqual({ state: 'replay', status: 201, body: '{}' });
  });

  it('an answer kept for a user goes with the user; one for a user deleted meanwhile is not kept: the key is free', async () => {
    const { store } = db();
    const [kept, late, ownerless] = [newKey(), newKey(), newKey()];
    const [owner, gone] = [await createUser(store), await createUser(store)];
    for (const key of [kept, late, ownerless]) await store.idempotency.claim(key, 'body-a', at(0));
    await store.idempotency.complete(kept, { status: 201, body: '{"kept":true}', ownerId: owner.id }, at(1));
    await store.idempotency.complete(ownerless, { status: 404, body: '{}', ownerId: null }, at(1));
    expect(await store.idempotency.claim(kept, 'body-a', at(2))).toEqual({ state: 'replay', status: 201, body: '{"kept":true}' });

    await store.users.delete(gone.id);
    await store.idempotency.complete(late, { status: 201, body: '{"late":true}', ownerId: gone.id }, at(3));
    expect(await store.idempotency.claim(late, 'body-b', at(4))).toEqual({ state: 'claimed' });

    await store.users.delete(owner.id);
    expect(await store.idempotency.claim(kept, 'body-b', at(5))).toEqual({ state: 'claimed' });
    expect(await store.idempotency.claim(ownerless, 'body-a', at(5))).toEqual({ state: 'replay', status: 404, body: '{}' });
  });

  it('of 20 concurrent takeovers of a stale claim, exactly one runs the request', async () => {
    const { idempotency } = db().store;
    const key = newKey();
    await idempotency.claim(key, 'body-a', at(0));
    const claims = await Promise.all(Array.from({ length: 20 }, () => idempotency.claim(key, 'body-a', at(30_000), at(20_000))));
    expect(claims.filter((claim) => claim.state === 'claimed')).toHaveLength(1);
    expect(claims.filter((claim) => claim.state === 'in_progress')).toHaveLength(19);
  });

  it('prunes the keys whose window has passed, and only those', async () => {
    const { store } = db();
    const [old, fresh] = [newKey(), newKey()];
    await store.idempotency.claim(old, 'body', at(-IDEMPOTENCY_WINDOW_MS - 1));
    await store.idempotency.claim(fresh, 'body', at(-IDEMPOTENCY_WINDOW_MS + 1_000));
    expect(await pruneIdempotencyKeysOnce(store, NOW)).toBeGreaterThanOrEqual(1);
    // A pruned key is free at once, even for a claim made as if within its old window.
    expect(await store.idempotency.claim(old, 'other', at(-IDEMPOTENCY_WINDOW_MS))).toEqual({ state: 'claimed' });
    expect(await store.idempotency.claim(fresh, 'other', at(0))).toEqual({ state: 'mismatch' });
  });
});
