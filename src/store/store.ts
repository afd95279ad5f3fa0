import type { Contact, ContactInput } from '../domain/contact.js';
import type { PageRequest } from '../domain/pagination.js';
import type { Plan } from '../domain/plan.js';
import type { Scope } from '../domain/scopes.js';

export interface User {
  id: string;
  email: string;
  name: string | null;
  plan: Plan;
  created_at: string;
}

export interface ApiKeyRecord {
  id: string;
  owner_id: string;
  label: string | null;
  scopes: Scope[];
  created_at: string;
  expires_at: string | null;
  last_used_at: string | null;
  revoked_at: string | null;
}

/** A key found by its hash, with what authorization needs to know of its owner. */
export interface KeyWithOwner {
  key: ApiKeyRecord;
  ownerPlan: Plan;
}

export interface NewUser {
  email: string;
  name: string | null;
  plan: Plan;
}

export interface NewApiKey {
  ownerId: string;
  label: string | null;
  scopes: Scope[];
  secretHash: string;
  expiresAt: string | null;
}

/** One record of an import, with where it came from (`line 4`, `record 2`) for error messages. */
export interface ImportRecord {
  label: string;
  contact: ContactInput;
}

export interface ContactPage {
  contacts: Contact[];
  total: number;
}

export interface UserStore {
  /** Creates the user and the user's own self row in contacts. Throws InputError when the email is taken. */
  create(user: NewUser): Promise<User>;
  /** Finds a user by id or by email (case-insensitive). */
  find(idOrEmail: string): Promise<User | null>;
  setPlan(userId: string, plan: Plan): Promise<User>;
}

export interface KeyStore {
  create(key: NewApiKey): Promise<ApiKeyRecord>;
  listForOwner(ownerId: string): Promise<ApiKeyRecord[]>;
  /** Revokes the key; revoking twice keeps the first time. Returns null when no such key exists. */
  revoke(keyId: string): Promise<ApiKeyRecord | null>;
  findByHash(secretHash: string): Promise<KeyWithOwner | null>;
  /** Records use of the key unless it was already recorded after `unlessUsedAfter`. */
  touch(keyId: string, usedAt: string, unlessUsedAfter: string): Promise<void>;
}

/** Every operation takes the owner whose contacts it reads or writes: there is no unscoped access. */
export interface ContactStore {
  /** Listable contacts (not merged, not the self row) ordered by created_at, then id. */
  listPage(ownerId: string, page: PageRequest): Promise<ContactPage>;
  /**
   * Inserts the records, or updates those whose id the owner already has, all in one transaction.
   * Throws InputError naming the record when an id belongs to another owner or to the self row.
   */
  importContacts(ownerId: string, records: readonly ImportRecord[]): Promise<number>;
  /** Soft-merges `duplicateId` into `survivorId`; both must be the owner's listable contacts. */
  merge(ownerId: string, duplicateId: string, survivorId: string): Promise<void>;
}

export interface Store {
  readonly kind: 'sqlite' | 'postgres';
  readonly users: UserStore;
  readonly keys: KeyStore;
  readonly contacts: ContactStore;
  /** Applies pending migrations; safe to call from several processes at once. Returns versions applied. */
  migrate(): Promise<number[]>;
  close(): Promise<void>;
}
