import { randomUUID } from 'node:crypto';
import { expect, it } from 'vitest';
import { parseEmailAddress } from '../../src/domain/email.js';
import { NotFoundError } from '../../src/domain/errors.js';
import { createKey, revokeKey } from '../../src/operations/keys.js';
import { createUser, listUsers, requireUser, setUserPlan } from '../../src/operations/users.js';
import { describeEachBackend } from '../support/backends.js';
import { rejection } from '../support/thrown.js';

let sequence = 0;
const newEmail = () => parseEmailAddress(`ops-${++sequence}-${Date.now()}@example.com`, 'email');

describeEachBackend('Operations: users', (db) => {
  it('createUser trims the name, a blank one being none', async () => {
    const { store } = db();
    expect(await createUser(store, { email: newEmail(), name: '  Ada Lovelace ', plan: 'pro' })).toMatchObject({
      name: 'Ada Lovelace',
      plan: 'pro',
    });
    expect((await createUser(store, { email: newEmail(), name: '   ', plan: 'free' })).name).toBeNull();
    expect((await createUser(store, { email: newEmail(), plan: 'free' })).name).toBeNull();
  });

  it('createUser creates the user’s self row, which is never listed', async () => {
    const user = await createUser(db().store, { email: newEmail(), plan: 'pro' });
    const page = await db().store.contacts.listPage(user.id, { limit: 10, offset: 0 });
    expect(page).toEqual({ contacts: [], total: 0 });
  });

  it('a user is named by id or by email, in any case; an unknown one is a NotFoundError naming it', async () => {
    const { store } = db();
    const user = await createUser(store, { email: newEmail(), plan: 'free' });
    for (const name of [user.id, user.id.toUpperCase(), user.email, user.email.toUpperCase()]) {
      expect(await requireUser(store, name), name).toEqual(user);
    }
    for (const unknown of ['nobody@example.com', randomUUID(), 'not-an-id']) {
      const error = await rejection(requireUser(store, unknown), NotFoundError);
      expect(error.message).toBe(`No user with email or id "${unknown}"`);
    }
  });

  it('setUserPlan changes the plan of the user named by email or id', async () => {
    const { store } = db();
    const user = await createUser(store, { email: newEmail(), plan: 'free' });
    expect(await setUserPlan(store, { user: user.email, plan: 'pro' })).toEqual({ ...user, plan: 'pro' });
    expect(await setUserPlan(store, { user: user.id, plan: 'free' })).toEqual({ ...user, plan: 'free' });
    await expect(setUserPlan(store, { user: 'nobody@example.com', plan: 'pro' })).rejects.toThrow(
      new NotFoundError('No user with email or id "nobody@example.com"'),
    );
  });

  it('listUsers gives users oldest first with how many keys each was given, revoked ones included, a page at a time', async () => {
    const { store } = db();
    const before = (await listUsers(store, { limit: 1, offset: 0 })).total;
    const first = await createUser(store, { email: newEmail(), name: 'First', plan: 'pro' });
    // A moment apart, so that creation times alone order them.
    await new Promise((resolve) => setTimeout(resolve, 5));
    const second = await createUser(store, { email: newEmail(), plan: 'free' });
    await createKey(store, 'cnt', { user: first.id, scopes: [], expires: null });
    const revoked = await createKey(store, 'cnt', { user: first.id, scopes: [], expires: null });
    await revokeKey(store, revoked.record.id);

    const listed = await listUsers(store, { limit: 100, offset: before });
    expect(listed).toEqual({
      users: [
        { ...first, keys: 2 },
        { ...second, keys: 0 },
      ],
      total: before + 2,
    });
    expect(await listUsers(store, { limit: 1, offset: before + 1 })).toEqual({ users: [{ ...second, keys: 0 }], total: before + 2 });
  });
});
