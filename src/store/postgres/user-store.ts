import type pg from 'pg';
import type { BillingPlan } from '../../domain/billing-plan.js';
import { InputError, NotFoundError } from '../../domain/errors.js';
import { canonicalId, newId } from '../../domain/ids.js';
import type { PageRequest } from '../../domain/pagination.js';
import { columnList, USER_COLUMNS, userWithKeyCountList } from '../columns.js';
import type { NewUser, User, UserPage, UserStore, UserWithKeyCount } from '../store.js';
import { inTransaction, queryable } from './transaction.js';
import { POSTGRES_DIALECT } from './dialect.js';

function isUniqueViolation(error: unknown): boolean {
  return (error as { code?: unknown } | null)?.code === '23505';
}

export class PostgresUserStore implements UserStore {
  constructor(private readonly pool: pg.Pool) {}

  async create(user: NewUser): Promise<User> {
    const now = new Date().toISOString();
    const created: User = { id: newId(), email: user.email, name: user.name, plan: user.plan, created_at: now };
    try {
      await inTransaction(this.pool, async (client) => {
        await client.query(
          `INSERT INTO users (id, email, name, plan, created_at, updated_at)
           VALUES ($1::uuid, $2::text, $3::text, $4::text, $5::timestamptz, $5::timestamptz)`,
          [created.id, created.email, created.name, created.plan, now],
        );
        await client.query(
          `INSERT INTO contacts (id, owner_id, is_self, name, email, created_at, updated_at)
           VALUES ($1::uuid, $2::uuid, true, $3::text, $4::text, $5::timestamptz, $5::timestamptz)`,
          [newId(), created.id, created.name, created.email, now],
        );
      });
    } catch (error) {
      if (isUniqueViolation(error)) throw new InputError(`A user with email ${user.email} already exists`);
      throw error;
    }
    return created;
  }

  async find(idOrEmail: string): Promise<User | null> {
    const db = queryable(this.pool);
    const id = canonicalId(idOrEmail);
    const { rows } =
      id !== null
        ? await db.query<User>(`SELECT ${columnList(USER_COLUMNS)} FROM users WHERE id = $1::uuid`, [id])
        : await db.query<User>(`SELECT ${columnList(USER_COLUMNS)} FROM users WHERE lower(email) = lower($1::text)`, [idOrEmail]);
    return rows[0] ?? null;
  }

  async setPlan(userId: string, plan: BillingPlan): Promise<User> {
    const id = canonicalId(userId);
    const { rows } =
      id !== null
        ? await this.pool.query<User>(
            `UPDATE users SET plan = $1::text, updated_at = $2::timestamptz WHERE id = $3::uuid RETURNING ${columnList(USER_COLUMNS)}`,
            [plan, new Date().toISOString(), id],
          )
        : { rows: [] };
    const row = rows[0];
    if (!row) throw new NotFoundError(`No user with id ${userId}`);
    return row;
  }

  async list(page: PageRequest): Promise<UserPage> {
    const db = queryable(this.pool);
    const { rows: users } = await db.query<UserWithKeyCount>(
      `SELECT ${userWithKeyCountList(POSTGRES_DIALECT)} FROM users u ORDER BY u.created_at, u.id LIMIT $1::int OFFSET $2::int`,
      [page.limit, page.offset],
    );
    const { rows } = await db.query<{ total: number }>('SELECT count(*)::int AS total FROM users');
    return { users, total: rows[0]!.total };
  }
}
