import { NotFoundError } from '../domain/errors.js';
import type { OwnerBatch } from './contracts/contact-store.js';
import type { NewUser } from './contracts/user-store.js';
import type { Store } from './store.js';

/** The steps of a bulk load; each store runs them inside its own single transaction. */
export async function importInBulk(
  store: Pick<Store, 'users' | 'contacts'>,
  users: readonly NewUser[],
  batches: AsyncIterable<OwnerBatch>,
): Promise<{ usersCreated: number; contacts: number }> {
  let usersCreated = 0;
  for (const user of users) {
    if (await store.users.find(user.email)) continue;
    await store.users.create(user);
    usersCreated += 1;
  }
  const owners = new Map<string, string>();
  let contacts = 0;
  for await (const batch of batches) {
    let ownerId = owners.get(batch.owner);
    if (ownerId === undefined) {
      const owner = await store.users.find(batch.owner);
      if (!owner) throw new NotFoundError(`${batch.records[0]?.label ?? 'contacts'}: no user with email or id "${batch.owner}"`);
      ownerId = owner.id;
      owners.set(batch.owner, ownerId);
    }
    await store.contacts.importContacts(ownerId, batch.records);
    contacts += batch.records.length;
  }
  return { usersCreated, contacts };
}
