import { CONTACTS_READ } from '../domain/scopes.js';
import type { Store, User } from '../store/store.js';
import { createKey, listKeys, revokeKey } from './keys.js';

const DEMO_EMAIL = 'demo@example.com';
const DEMO_CONTACTS = 300;
const DEMO_DUPLICATES = 12;
/** The label of the key the demo gives: the demo keeps one such key active. */
const DEMO_KEY_LABEL = 'demo';

export interface DemoSetup {
  user: User;
  /** The new key's plaintext, shown once. */
  key: string;
  keyId: string;
  /** The demo keys revoked for the new one. */
  revokedKeyIds: string[];
  /** The demo user's listable contacts. */
  contacts: number;
}

/**
 * Creates (once) a Pro demo user with generated contacts, a few of them soft-merged duplicates, and gives it a fresh
 * key, revoking the demo keys made before: running the demo again leaves one active.
 */
export async function prepareDemo(store: Store, keyPrefix: string): Promise<DemoSetup> {
  const user = await ensureDemoUser(store);
  const created = await createKey(store, keyPrefix, { user: user.id, label: DEMO_KEY_LABEL, scopes: [CONTACTS_READ], expires: null });
  const revokedKeyIds = await revokeOtherDemoKeys(store, user.id, created.record.id);
  const contacts = (await store.contacts.listPage(user.id, { limit: 1, offset: 0 })).total;
  return { user, key: created.key, keyId: created.record.id, revokedKeyIds, contacts };
}

/** Revokes the demo user's other active demo keys; returns their ids. */
async function revokeOtherDemoKeys(store: Store, demoUserId: string, keptKeyId: string): Promise<string[]> {
  const replaced = (await listKeys(store, demoUserId)).filter(
    (key) => key.label === DEMO_KEY_LABEL && key.id !== keptKeyId && key.status === 'active',
  );
  for (const key of replaced) await revokeKey(store, key.id);
  return replaced.map((key) => key.id);
}

async function ensureDemoUser(store: Store): Promise<User> {
  const existing = await store.users.find(DEMO_EMAIL);
  if (existing) return existing.plan === 'pro' ? existing : store.users.setPlan(existing.id, 'pro');
  const user = await store.users.create({ email: DEMO_EMAIL, name: 'Demo User', plan: 'pro' });
  // Loaded here: faker takes about 30 MB, which every other command (serve, in each worker) would carry for nothing.
  const { generateDemoContacts } = await import('../demo/demo-contacts.js');
  const records = generateDemoContacts(DEMO_CONTACTS + DEMO_DUPLICATES, 42, new Date());
  // The last few generated contacts become duplicates of earlier ones, then are soft-merged into them.
  const merges = records.slice(DEMO_CONTACTS).map((duplicate, index) => {
    const original = records[index * 7]!.contact;
    duplicate.contact.values = { ...duplicate.contact.values, name: original.values.name, email: original.values.email };
    return { duplicateId: duplicate.contact.id!, survivorId: original.id! };
  });
  await store.contacts.importContacts(user.id, records);
  for (const { duplicateId, survivorId } of merges) await store.contacts.merge(user.id, duplicateId, survivorId);
  return user;
}
