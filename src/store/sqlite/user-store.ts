import type { BillingPlan } from '../../domain/billing-plan.js';
import { NotFoundError } from '../../domain/errors.js';
import { canonicalId, newId, parseChosenId } from '../../domain/ids.js';
import type { PageRequest } from '../../domain/pagination.js';
import { columnList, USER_COLUMNS, userWithKeyCountList } from '../columns.js';
import type { NewUser, User, UserChanges, UserPage, UserStore, UserWithKeyCount } from '../contracts/user-store.js';
import { userConflict } from '../user-conflict.js';
import type { StatementCache } from './statements.js';
import type { SqliteWriteLock } from './transaction.js';
import { SQLITE_DIALECT } from './dialect.js';

const UPDATE_USER_SQL = `UPDATE users
  SET email = coalesce(?, email), plan = coalesce(?, plan), name = CASE WHEN ? THEN ? ELSE name END, updated_at = ?
  WHERE id = ? RETURNING ${columnList(USER_COLUMNS)}`;
/** The self row follows the user's name and email; written only when one of them changed. */
const UPDATE_SELF_ROW_SQL = `UPDATE contacts SET name = ?, email = ?, updated_at = ?
  WHERE owner_id = ? AND is_self = 1 AND (name IS NOT ? OR email IS NOT ?)`;

const UNIQUE_FAILURES = new Set(['SQLITE_CONSTRAINT_PRIMARYKEY', 'SQLITE_CONSTRAINT_UNIQUE']);
const isUniqueFailure = (error: unknown) => UNIQUE_FAILURES.has((error as { code?: unknown } | null)?.code as string);

export class SqliteUserStore implements UserStore {
  constructor(
    private readonly statements: StatementCache,
    private readonly writeLock: SqliteWriteLock,
  ) {}

  async create(user: NewUser): Promise<User> {
    const now = new Date().toISOString();
    const id = user.id === undefined ? newId() : parseChosenId(user.id);
    const created: User = { id, email: user.email, name: user.name, plan: user.plan, created_at: now };
    const insert = () => {
      this.statements
        .get('INSERT INTO users (id, email, name, plan, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?)')
        .run(created.id, created.email, created.name, created.plan, now, now);
      this.statements
        .get(
          `INSERT INTO contacts (id, owner_id, is_self, name, email, created_at, updated_at)
           VALUES (?, ?, 1, ?, ?, ?, ?)`,
        )
        .run(newId(), created.id, created.name, created.email, now, now);
    };
    try {
      await this.writeLock.run(insert);
    } catch (error) {
      if (!isUniqueFailure(error)) throw error;
      throw (error as Error).message.includes('users.id') ? userConflict('id', id) : userConflict('email', user.email);
    }
    return created;
  }

  async find(idOrEmail: string): Promise<User | null> {
    const id = canonicalId(idOrEmail);
    const row =
      id !== null
        ? this.statements.get(`SELECT ${columnList(USER_COLUMNS)} FROM users WHERE id = ?`).get(id)
        : this.statements.get(`SELECT ${columnList(USER_COLUMNS)} FROM users WHERE lower(email) = lower(?)`).get(idOrEmail);
    return (row as User | undefined) ?? null;
  }

  async setPlan(userId: string, plan: BillingPlan): Promise<User> {
    const user = await this.update(userId, { plan });
    if (!user) throw new NotFoundError(`No user with id ${userId}`);
    return user;
  }

  async update(userId: string, changes: UserChanges): Promise<User | null> {
    const id = canonicalId(userId);
    if (id === null) return null;
    const now = new Date().toISOString();
    const write = () => {
      const user = this.statements
        .get(UPDATE_USER_SQL)
        .get(changes.email ?? null, changes.plan ?? null, changes.name !== undefined ? 1 : 0, changes.name ?? null, now, id) as
        User | undefined;
      if (user) this.statements.get(UPDATE_SELF_ROW_SQL).run(user.name, user.email, now, id, user.name, user.email);
      return user ?? null;
    };
    try {
      return await this.writeLock.run(write);
    } catch (error) {
      // The id stays: only the email can be another user's.
      throw isUniqueFailure(error) ? userConflict('email', changes.email!) : error;
    }
  }

  async delete(userId: string): Promise<boolean> {
    const id = canonicalId(userId);
    if (id === null) return false;
    return this.writeLock.run(() => {
      this.statements.get('DELETE FROM oauth_records WHERE account_id IN (SELECT id FROM api_keys WHERE owner_id = ?)').run(id);
      return this.statements.get('DELETE FROM users WHERE id = ?').run(id).changes > 0;
    });
  }

  async list(page: PageRequest): Promise<UserPage> {
    const users = this.statements
      .get(`SELECT ${userWithKeyCountList(SQLITE_DIALECT)} FROM users u ORDER BY u.created_at, u.id LIMIT ? OFFSET ?`)
      .all(page.limit, page.offset) as UserWithKeyCount[];
    const { total } = this.statements.get('SELECT count(*) AS total FROM users').get() as { total: number };
    return { users, total };
  }
}
