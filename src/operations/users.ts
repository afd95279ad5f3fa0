import type { BillingPlan } from '../domain/billing-plan.js';
import type { EmailAddress } from '../domain/email.js';
import { NotFoundError } from '../domain/errors.js';
import type { PageRequest } from '../domain/pagination.js';
import type { Store, User, UserPage } from '../store/store.js';

export type { User, UserPage, UserWithKeyCount } from '../store/store.js';

type Users = Pick<Store, 'users'>;

/** The user named by id (any case) or by email (case ignored); NotFoundError when none. */
export async function requireUser(store: Users, idOrEmail: string): Promise<User> {
  const user = await store.users.find(idOrEmail);
  if (!user) throw new NotFoundError(`No user with email or id "${idOrEmail}"`);
  return user;
}

export interface NewUserRequest {
  email: EmailAddress;
  /** Trimmed; blank or absent means no name. */
  name?: string | null;
  plan: BillingPlan;
}

/** Creates the user and the user's own self contact; InputError when another user has the email, in any case. */
export async function createUser(store: Users, request: NewUserRequest): Promise<User> {
  return store.users.create({ email: request.email, name: request.name?.trim() || null, plan: request.plan });
}

/** Moves the user (id or email) to `plan`; a running server applies it to the user's keys within a second. */
export async function setUserPlan(store: Users, request: { user: string; plan: BillingPlan }): Promise<User> {
  return store.users.setPlan((await requireUser(store, request.user)).id, request.plan);
}

/** A page of every user, oldest first, each with how many keys the user has been given (revoked and expired too). */
export async function listUsers(store: Users, page: PageRequest): Promise<UserPage> {
  return store.users.list(page);
}
