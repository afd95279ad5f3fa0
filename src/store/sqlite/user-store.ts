import type { BillingPlan } from '../../domain/billing-plan.js';
import { InputError, NotFoundError } from '../../domain/errors.js';
import { canonicalId, newId } from '../../domain/ids.js';
import type { PageRequest } from '../../domain/pagination.js';
import { columnList, USER_COLUMNS, userWithKeyCountList } from '../columns.js';
import type { NewUser, User, UserPage, UserStore, UserWithKeyCount } from '../store.js';
import type { StatementCache } from './statements.js';
import type { SqliteWriteLock } from './transaction.js';
import { SQLITE_DIALECT } from './dialect.js';

export class SqliteUserStore implements UserStore {
  constructor(
    private readonly statements: StatementCache,
    private readonly writeLock: SqliteWriteLock,
  ) {}

  async create(user: NewUser): Promise<User> {
    const now = new Date().toISOString();
    const created: User = { id: newId(), email: user.email, name: user.name, plan: user.plan, created_at: now };
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
      if ((error as { code?: string }).code === 'SQLITE_CONSTRAINT_UNIQUE') {
        throw new InputError(`A user with email ${user.email} already exists`);
      }
      throw error;
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
    const row = await this.writeLock.run(() =>
      this.statements
        .get(`UPDATE users SET plan = ?, updated_at = ? WHERE id = ? RETURNING ${columnList(USER_COLUMNS)}`)
        .get(plan, new Date().toISOString(), canonicalId(userId)),
    );
    if (!row) throw new NotFoundError(`No user with id ${userId}`);
    return row as User;
  }

  async list(page: PageRequest): Promise<UserPage> {
    const users = this.statements
      .get(`SELECT ${userWithKeyCountList(SQLITE_DIALECT)} FROM users u ORDER BY u.created_at, u.id LIMIT ? OFFSET ?`)
      .all(page.limit, page.offset) as UserWithKeyCount[];
    const { total } = this.statements.get('SELECT count(*) AS total FROM users').get() as { total: number };
    return { users, total };
  }
}
