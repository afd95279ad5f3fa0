import { randomUUID } from 'node:crypto';
import { expect, it } from 'vitest';
import { hashApiKey } from '../../src/domain/api-key.js';
import { InputError, NotFoundError } from '../../src/domain/errors.js';
import { describeEachBackend } from '../support/backends.js';
import { createKey, createUser } from '../support/seed.js';

const MALFORMED_IDS = ['not-a-uuid', '', '0190a3c4-5b6d-7e8f-9a0b', "x' OR '1'='1"];

describeEachBackend('Store contract: users', (db) => {
  it('refuses a second user with the same email, in any case, and changes nothing', async () => {
    const { store } = db();
    const first = await store.users.create({ email: 'Dup.Contract@Example.com', name: 'First', plan: 'pro' });
    for (const email of ['Dup.Contract@Example.com', 'dup.contract@example.com', 'DUP.CONTRACT@EXAMPLE.COM']) {
      const failure = store.users.create({ email, name: 'Second', plan: 'free' });
      await expect(failure).rejects.toThrow(InputError);
      await expect(failure).rejects.toThrow(`A user with email ${email} already exists`);
    }
    expect(await store.users.find('dup.contract@example.com')).toEqual(first);
  });

  it('finds a user by id in any case, and by email ignoring case', async () => {
    const { store } = db();
    const user = await createUser(db().store);
    expect(await store.users.find(user.id)).toEqual(user);
    expect(await store.users.find(user.id.toUpperCase())).toEqual(user);
    expect(await store.users.find(user.email.toUpperCase())).toEqual(user);
  });

  it('finds nothing for an unknown or malformed id', async () => {
    const { store } = db();
    expect(await store.users.find(randomUUID())).toBeNull();
    for (const id of MALFORMED_IDS) expect(await store.users.find(id), id).toBeNull();
  });

  it('changes the plan of a user named by an id in any case', async () => {
    const { store } = db();
    const user = await createUser(store, 'pro');
    expect(await store.users.setPlan(user.id.toUpperCase(), 'free')).toEqual({ ...user, plan: 'free' });
    expect((await store.users.find(user.id))!.plan).toBe('free');
  });

  it('refuses to change the plan of an unknown or malformed id with NotFoundError', async () => {
    const { store } = db();
    for (const id of [randomUUID(), ...MALFORMED_IDS]) {
      await expect(store.users.setPlan(id, 'free'), id).rejects.toThrow(new NotFoundError(`No user with id ${id}`));
    }
  });
});

describeEachBackend('Store contract: keys', (db) => {
  it('revoking twice keeps the first revocation time', async () => {
    const { store } = db();
    const user = await createUser(store);
    const { id } = await createKey(store, user.id);
    const first = await store.keys.revoke(id);
    expect(first!.revoked_at).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/);
    await new Promise((resolve) => setTimeout(resolve, 5));
    const second = await store.keys.revoke(id.toUpperCase());
    expect(second).toEqual(first);
  });

  it('a revoked key is still found by its hash, with its revocation, so authentication can refuse it', async () => {
    const { store } = db();
    const user = await createUser(store);
    const { id, key } = await createKey(store, user.id);
    await store.keys.revoke(id);
    const found = await store.keys.findByHash(hashApiKey(key));
    expect(found).toMatchObject({ key: { id, owner_id: user.id }, ownerPlan: 'pro' });
    expect(found!.key.revoked_at).not.toBeNull();
  });

  it('revoke finds nothing for an unknown or malformed id', async () => {
    const { store } = db();
    for (const id of [randomUUID(), ...MALFORMED_IDS]) expect(await store.keys.revoke(id), id).toBeNull();
  });

  it("lists an owner's keys for an id in any case, and none for an unknown or malformed owner", async () => {
    const { store } = db();
    const user = await createUser(store);
    const a = await createKey(store, user.id);
    const b = await createKey(store, user.id.toUpperCase());
    expect((await store.keys.listForOwner(user.id.toUpperCase())).map((key) => key.id)).toEqual([a.id, b.id]);
    expect((await store.keys.listForOwner(user.id)).every((key) => key.owner_id === user.id)).toBe(true);
    for (const id of [randomUUID(), ...MALFORMED_IDS]) expect(await store.keys.listForOwner(id), id).toEqual([]);
  });

  it('finds nothing for an unknown hash', async () => {
    expect(await db().store.keys.findByHash(hashApiKey('cnt_live_unknown'))).toBeNull();
  });

  it('records use for an id in any case and ignores unknown or malformed ids', async () => {
    const { store } = db();
    const user = await createUser(store);
    const { id, key } = await createKey(store, user.id);
    const usedAt = '2024-05-01T09:30:00.000Z';
    await store.keys.touch(id.toUpperCase(), usedAt, '2024-05-01T09:29:00.000Z');
    for (const unknown of [randomUUID(), ...MALFORMED_IDS]) await store.keys.touch(unknown, usedAt, usedAt);
    await expect.poll(async () => (await store.keys.findByHash(hashApiKey(key)))!.key.last_used_at).toBe(usedAt);
  });
});
