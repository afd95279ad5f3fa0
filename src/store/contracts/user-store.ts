import type { BillingPlan } from '../../domain/billing-plan.js';
import type { PageRequest } from '../../domain/pagination.js';

export interface User {
  id: string;
  email: string;
  name: string | null;
  plan: BillingPlan;
  created_at: string;
}

/** A user as `users list` shows it: with how many keys the user has been given, whatever their status. */
export interface UserWithKeyCount extends User {
  keys: number;
}

/** A page of users, oldest first, and how many there are. */
export interface UserPage {
  users: UserWithKeyCount[];
  total: number;
}

export interface NewUser {
  /** The caller's own id for the user, a UUID (parseChosenId); a new one is made when absent. */
  id?: string;
  email: string;
  name: string | null;
  plan: BillingPlan;
}

/** What an update changes of a user; a field left out keeps its value. */
export interface UserChanges {
  email?: string;
  name?: string | null;
  plan?: BillingPlan;
}

export interface UserStore {
  /**
   * Creates the user and the user's own self row in contacts. Throws ConflictError when the id or the email (ignoring
   * case) is taken, InputError when the id is not a UUID.
   */
  create(user: NewUser): Promise<User>;
  /** Finds a user by id or by email (case-insensitive). */
  find(idOrEmail: string): Promise<User | null>;
  /** Throws NotFoundError when there is no such user. */
  setPlan(userId: string, plan: BillingPlan): Promise<User>;
  /**
   * Changes the named fields (the self row's name and email with them); null when there is no such user. Throws
   * ConflictError when another user holds the email (ignoring case).
   */
  update(userId: string, changes: UserChanges): Promise<User | null>;
  /**
   * Deletes the user and everything that is theirs, in one transaction: keys, contacts, change log, listing state,
   * webhook endpoints, the idempotent answers kept for them, and every OAuth record (grant, code, token, session) bound
   * to one of their keys. False when there is no such user.
   */
  delete(userId: string): Promise<boolean>;
  /** A page of every user, oldest first (created_at, then id). */
  list(page: PageRequest): Promise<UserPage>;
}
