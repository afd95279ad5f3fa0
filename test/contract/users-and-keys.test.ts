import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { apiKeyStart, generateApiKey, hashApiKey } from '../../src/domain/api-key.js';
import { ConflictError, InputError, NotFoundError } from '../../src/domain/errors.js';
import type { OAuthRecord, Store } from '../../src/store/store.js';
import { describeEachBackend } from '../support/backends.js';
import { openOtherConnection, type OtherConnection } from '../support/other-connection.js';
import { contactRecord, createKey, createUser } from '../support/seed.js';

const MALFORMED_IDS = ['not-a-uuid', '', '0190a3c4-5b6d-7e8f-9a0b', "x' OR '1'='1"];

const oauthRecord = (idHash: string, accountId: string | null): OAuthRecord => ({
  kind: 'AccessToken',
  idHash,
  payload: JSON.stringify({ accountId }),
  grantId: null,
  accountId,
  uidHash: null,
  expiresAt: new Date(Date.now() + 3_600_000).toISOString(),
});
const oauthFound = (store: Store, idHash: string) => store.oauth.find('AccessToken', idHash, new Date().toISOString());

describeEachBackend('Store contract: users', (db) => {
  it('refuses a second user with the same email, in any case, with a 409, and changes nothing', async () => {
    const { store } = db();
    const first = await store.users.create({ email: 'Dup.Contract@Example.com', name: 'First', plan: 'pro' });
    for (const email of ['Dup.Contract@Example.com', 'dup.contract@example.com', 'DUP.CONTRACT@EXAMPLE.COM']) {
      const failure = store.users.create({ email, name: 'Second', plan: 'free' });
      await expect(failure).rejects.toThrow(ConflictError);
      await expect(failure).rejects.toMatchObject({ status: 409, message: `A user with email ${email} already exists` });
    }
    expect(await store.users.find('dup.contract@example.com')).toEqual(first);
  });

  it("creates a user under the caller's own UUID, stored lower-case, and refuses it twice with a 409", async () => {
    const { store } = db();
    const id = randomUUID().toUpperCase();
    const user = await store.users.create({ id, email: `chosen-${id}@example.com`, name: null, plan: 'free' });
    expect(user.id).toBe(id.toLowerCase());
    expect(await store.users.find(id)).toEqual(user);
    for (const again of [id, id.toLowerCase()]) {
      const failure = store.users.create({ id: again, email: `other-${randomUUID()}@example.com`, name: null, plan: 'free' });
      await expect(failure).rejects.toThrow(ConflictError);
      await expect(failure).rejects.toThrow(`A user with id ${id.toLowerCase()} already exists`);
    }
  });

  it('refuses a chosen id that is not a UUID with InputError, creating nothing', async () => {
    const { store } = db();
    for (const id of MALFORMED_IDS) {
      const email = `malformed-${randomUUID()}@example.com`;
      await expect(store.users.create({ id, email, name: null, plan: 'free' }), id).rejects.toThrow(
        new InputError(`id must be a UUID; got "${id}"`),
      );
      expect(await store.users.find(email)).toBeNull();
    }
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

describeEachBackend('Store contract: updating and deleting users', (db) => {
  let other: OtherConnection;
  beforeAll(async () => {
    other = await openOtherConnection(db());
  });
  afterAll(async () => {
    await other.close();
  });
  const selfRow = async (ownerId: string) =>
    (
      await other.rows<{ name: string | null; email: string }>(
        'SELECT name, email FROM contacts WHERE owner_id = ? AND is_self = ?',
        ownerId,
        db().backend === 'sqlite' ? 1 : true,
      )
    )[0];
  const count = async (table: string, column: string, value: string) =>
    Number((await other.rows<{ n: number | string }>(`SELECT count(*) AS n FROM ${table} WHERE ${column} = ?`, value))[0]!.n);

  it('changes only the fields named, the self row following name and email', async () => {
    const { store } = db();
    const user = await createUser(store, 'free', 'Before');
    expect(await store.users.update(user.id.toUpperCase(), { plan: 'pro' })).toEqual({ ...user, plan: 'pro' });
    const email = `renamed-${randomUUID()}@example.com`;
    const renamed = await store.users.update(user.id, { email, name: 'After' });
    expect(renamed).toEqual({ ...user, plan: 'pro', email, name: 'After' });
    expect(await store.users.find(email)).toEqual(renamed);
    expect(await selfRow(user.id)).toEqual({ name: 'After', email });
    expect(await store.users.update(user.id, { name: null })).toEqual({ ...renamed, name: null });
    expect(await selfRow(user.id)).toEqual({ name: null, email });
    expect(await store.users.update(user.id, {})).toEqual({ ...renamed, name: null });
  });

  it("refuses an email another user holds, in any case, with a 409, and changes nothing; the user's own in another case is fine", async () => {
    const { store } = db();
    const [holder, user] = [await createUser(store), await createUser(store)];
    const failure = store.users.update(user.id, { email: holder.email.toUpperCase(), plan: 'free' });
    await expect(failure).rejects.toThrow(ConflictError);
    await expect(failure).rejects.toThrow(`A user with email ${holder.email.toUpperCase()} already exists`);
    expect(await store.users.find(user.id)).toEqual(user);
    expect(await selfRow(user.id)).toEqual({ name: user.name, email: user.email });
    const recased = await store.users.update(user.id, { email: user.email.toUpperCase() });
    expect(recased).toEqual({ ...user, email: user.email.toUpperCase() });
  });

  it('updates nothing and answers null for an unknown or malformed id', async () => {
    const { store } = db();
    for (const id of [randomUUID(), ...MALFORMED_IDS]) expect(await store.users.update(id, { plan: 'free' }), id).toBeNull();
  });

  it("deletes the user with keys, contacts, change log, listing state and their keys' OAuth records, and no one else's", async () => {
    const { store } = db();
    const [user, neighbour] = [await createUser(store), await createUser(store)];
    const owned = await Promise.all(
      [user, neighbour].map(async (owner) => {
        const keys = [await createKey(store, owner.id), await createKey(store, owner.id)];
        await store.contacts.importContacts(owner.id, [contactRecord({ name: 'A' }), contactRecord({ name: 'B' })]);
        for (const key of keys) await store.oauth.save(oauthRecord(`token-${key.id}`, key.id));
        return { owner, keys };
      }),
    );
    await store.oauth.save(oauthRecord('token-without-account', null));
    const seen = async ({ owner, keys }: (typeof owned)[number]) => ({
      user: await store.users.find(owner.id),
      keys: await Promise.all(keys.map(async (key) => (await store.keys.findByHash(hashApiKey(key.key)))?.key.id ?? null)),
      oauth: await Promise.all(keys.map(async (key) => (await oauthFound(store, `token-${key.id}`)) !== null)),
      contacts: await count('contacts', 'owner_id', owner.id),
      changes: await count('contact_changes', 'owner_id', owner.id),
      listing: await count('owner_listing', 'owner_id', owner.id),
    });
    const neighbourBefore = await seen(owned[1]!);
    expect(neighbourBefore).toMatchObject({ oauth: [true, true], contacts: 3, changes: 2, listing: 1 });

    expect(await store.users.delete(user.id.toUpperCase())).toBe(true);
    expect(await seen(owned[0]!)).toEqual({ user: null, keys: [null, null], oauth: [false, false], contacts: 0, changes: 0, listing: 0 });
    for (const key of owned[0]!.keys) expect(await store.keys.findById(key.id)).toBeNull();
    expect(await seen(owned[1]!)).toEqual(neighbourBefore);
    expect(await oauthFound(store, 'token-without-account')).not.toBeNull();
    expect((await store.contacts.listPage(neighbour.id, { offset: 0, limit: 10 })).total).toBe(2);
    expect(await store.users.delete(user.id)).toBe(false);
  });

  it('deletes nothing and answers false for an unknown or malformed id', async () => {
    const { store } = db();
    for (const id of [randomUUID(), ...MALFORMED_IDS]) expect(await store.users.delete(id), id).toBe(false);
  });
});

describeEachBackend('Store contract: keys', (db) => {
  it('keeps the display form a key was created with', async () => {
    const { store } = db();
    const user = await createUser(store);
    const key = generateApiKey('cnt');
    const record = await store.keys.create({
      ownerId: user.id,
      label: null,
      scopes: [],
      secretHash: hashApiKey(key),
      start: apiKeyStart(key),
      expiresAt: null,
    });
    expect(record.start).toBe(apiKeyStart(key));
    expect((await store.keys.findByHash(hashApiKey(key)))!.key).toEqual(record);
    expect((await store.keys.listForOwner(user.id)).map((listed) => [listed.id, listed.start])).toEqual([[record.id, apiKeyStart(key)]]);
  });

  it("revoking a key deletes the OAuth records bound to it, and no other key's", async () => {
    const { store } = db();
    const user = await createUser(store);
    const [revoked, kept] = [await createKey(store, user.id), await createKey(store, user.id)];
    await store.oauth.save(oauthRecord('revoked-token', revoked.id));
    await store.oauth.save(oauthRecord('kept-token', kept.id));
    await store.keys.revoke(revoked.id.toUpperCase());
    expect(await oauthFound(store, 'revoked-token')).toBeNull();
    expect(await oauthFound(store, 'kept-token')).not.toBeNull();
  });

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

describeEachBackend('Store contract: rotating keys', (db) => {
  const rotation = (oldKeyId: string, oldExpiresAt: string, expiresAt: string | null = null) => {
    const key = generateApiKey('cnt');
    return { key, rotation: { oldKeyId, oldExpiresAt, secretHash: hashApiKey(key), start: apiKeyStart(key), expiresAt } };
  };

  it("makes a successor with the old key's owner, label and scopes, and the old key expire when asked", async () => {
    const { store } = db();
    const user = await createUser(store);
    const old = await createKey(store, user.id, { scopes: [] });
    const oldExpiresAt = '2030-01-01T00:00:00.000Z';
    const { key, rotation: asked } = rotation(old.id.toUpperCase(), oldExpiresAt, '2031-01-01T00:00:00.000Z');
    const rotated = await store.keys.rotate(asked);
    const before = (await store.keys.findById(old.id))!.key;
    expect(rotated!.replaced).toEqual(before);
    expect(before.expires_at).toBe(oldExpiresAt);
    expect(rotated!.created).toMatchObject({
      owner_id: user.id,
      label: 'test',
      scopes: [],
      start: apiKeyStart(key),
      expires_at: '2031-01-01T00:00:00.000Z',
      revoked_at: null,
      last_used_at: null,
    });
    expect((await store.keys.findByHash(hashApiKey(key)))!.key).toEqual(rotated!.created);
    expect((await store.keys.listForOwner(user.id)).map((listed) => listed.id)).toEqual([old.id, rotated!.created.id]);
  });

  it('never makes the old key live longer than it would have', async () => {
    const { store } = db();
    const user = await createUser(store);
    const sooner = '2029-01-01T00:00:00.000Z';
    const old = await createKey(store, user.id, { expiresAt: sooner });
    const rotated = await store.keys.rotate(rotation(old.id, '2030-01-01T00:00:00.000Z').rotation);
    expect(rotated!.replaced.expires_at).toBe(sooner);
  });

  it('answers null for an unknown or malformed key, and refuses a revoked one with a 409, creating nothing', async () => {
    const { store } = db();
    for (const id of [randomUUID(), ...MALFORMED_IDS])
      expect(await store.keys.rotate(rotation(id, new Date().toISOString()).rotation), id).toBeNull();
    const user = await createUser(store);
    const revoked = await createKey(store, user.id);
    await store.keys.revoke(revoked.id);
    const failure = store.keys.rotate(rotation(revoked.id, new Date().toISOString()).rotation);
    await expect(failure).rejects.toThrow(ConflictError);
    await expect(failure).rejects.toThrow(`Key ${revoked.id} is revoked and cannot be rotated`);
    expect((await store.keys.listForOwner(user.id)).map((listed) => listed.id)).toEqual([revoked.id]);
  });

  it('is one transaction: when the successor cannot be created, the old key keeps its expiry', async () => {
    const { store } = db();
    const user = await createUser(store);
    const old = await createKey(store, user.id);
    // The successor's secret hash is the old key's own, which the unique index refuses.
    const failing = { ...rotation(old.id, new Date().toISOString()).rotation, secretHash: hashApiKey(old.key) };
    await expect(store.keys.rotate(failing)).rejects.toThrow();
    expect((await store.keys.findById(old.id))!.key.expires_at).toBeNull();
    expect(await store.keys.listForOwner(user.id)).toHaveLength(1);
  });
});
