import type { BillingPlan } from '../domain/billing-plan.js';
import type { EmailAddress } from '../domain/email.js';
import { NotFoundError } from '../domain/errors.js';
import { canonicalId } from '../domain/ids.js';
import type { PageRequest } from '../domain/pagination.js';
import type { Store, User, UserPage } from '../store/store.js';

export type { User, UserPage, UserWithKeyCount } from '../store/store.js';

type Users = Pick<Store, 'users'>;

/** A user named by id or email (the CLI's `--user`), or by id alone (`{ id }`: the admin API's paths). */
export type UserRef = string | { id: string };

/** The user named (an id in any case, an email ignoring case); NotFoundError when none. */
export async function requireUser(store: Users, user: UserRef): Promise<User> {
  if (typeof user !== 'string') {
    const found = canonicalId(user.id) === null ? null : await store.users.find(user.id);
    if (!found) throw noSuchUser(user.id);
    return found;
  }
  const found = await store.users.find(user);
  if (!found) throw new NotFoundError(`No user with email or id "${user}"`);
  return found;
}

const noSuchUser = (id: string) => new NotFoundError(`No user with id "${id}"`);

export interface NewUserRequest {
  /** The caller's own id for the user, a UUID (a host whose user ids are UUIDs shares them); a new one when absent. */
  id?: string;
  email: EmailAddress;
  /** Trimmed; blank or absent means no name. */
  name?: string | null;
  plan: BillingPlan;
}

/**
 * Creates the user and the user's own self contact. ConflictError when another user has the id or the email (in any
 * case); InputError when the id is not a UUID.
 */
export async function createUser(store: Users, request: NewUserRequest): Promise<User> {
  const { id, email, plan } = request;
  return store.users.create({ ...(id === undefined ? {} : { id }), email, name: trimmedName(request.name), plan });
}

/** The user holding this email, ignoring case, or null. */
export async function findUserByEmail(store: Users, email: EmailAddress): Promise<User | null> {
  return store.users.find(email);
}

export interface UserUpdate {
  email?: EmailAddress;
  /** Trimmed; blank or null means no name. */
  name?: string | null;
  /** A running server applies a plan change to the user's keys and OAuth tokens within a second. */
  plan?: BillingPlan;
}

/** Changes the named fields of the user with this id; NotFoundError when none, ConflictError when another user has the email. */
export async function updateUser(store: Users, id: string, update: UserUpdate): Promise<User> {
  const { name, ...rest } = update;
  const user = await store.users.update(id, name === undefined ? rest : { ...rest, name: trimmedName(name) });
  if (!user) throw noSuchUser(id);
  return user;
}

/**
 * Deletes the user with this id and everything that is theirs: keys, OAuth grants, contacts, webhook endpoints, the
 * admin API's answers kept for them. A running server refuses their keys within a second. NotFoundError when there is
 * no such user.
 */
export async function deleteUser(store: Users, id: string): Promise<void> {
  if (!(await store.users.delete(id))) throw noSuchUser(id);
}

/** Moves the user (id or email) to `plan`; a running server applies it to the user's keys within a second. */
export async function setUserPlan(store: Users, request: { user: string; plan: BillingPlan }): Promise<User> {
  return store.users.setPlan((await requireUser(store, request.user)).id, request.plan);
}

/** A page of every user, oldest first, each with how many keys the user has been given (revoked and expired too). */
export async function listUsers(store: Users, page: PageRequest): Promise<UserPage> {
  return store.users.list(page);
}

function trimmedName(name: string | null | undefined): string | null {
  return name?.trim() || null;
}
