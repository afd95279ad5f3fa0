import { apiKeyStart, generateApiKey, hashApiKey } from '../../src/domain/api-key.js';
import type { ContactValues } from '../../src/domain/contact.js';
import { normalizeContactInput } from '../../src/domain/contact-input.js';
import type { BillingPlan } from '../../src/domain/billing-plan.js';
import { CONTACTS_READ, type Scope } from '../../src/domain/scopes.js';
import type { ImportRecord, Store, User } from '../../src/store/store.js';

export const TEST_KEY_PREFIX = 'cnt';
let sequence = 0;

export async function createUser(store: Store, plan: BillingPlan = 'pro', name = 'Test User'): Promise<User> {
  sequence += 1;
  return store.users.create({ email: `user${sequence}-${Date.now()}@example.com`, name, plan });
}

export async function createKey(
  store: Store,
  ownerId: string,
  options: { scopes?: Scope[]; expiresAt?: string | null; prefix?: string } = {},
): Promise<{ id: string; key: string }> {
  const key = generateApiKey(options.prefix ?? TEST_KEY_PREFIX);
  const record = await store.keys.create({
    ownerId,
    label: 'test',
    scopes: options.scopes ?? [CONTACTS_READ],
    secretHash: hashApiKey(key),
    start: apiKeyStart(key),
    expiresAt: options.expiresAt ?? null,
  });
  return { id: record.id, key };
}

export function contactRecord(values: Partial<ContactValues>, id: string | null = null, label = 'test'): ImportRecord {
  return { label, contact: normalizeContactInput({ ...values, id }) };
}

/** Imports `count` contacts named `${prefix} 1…count`, one millisecond apart from `start`. */
export async function importNumberedContacts(
  store: Store,
  ownerId: string,
  count: number,
  prefix: string,
  start = Date.parse('2024-01-01T00:00:00.000Z'),
): Promise<void> {
  const records = Array.from({ length: count }, (_, index) => {
    const at = new Date(start + index).toISOString();
    return contactRecord({ name: `${prefix} ${index + 1}`, created_at: at, updated_at: at });
  });
  await store.contacts.importContacts(ownerId, records);
}
