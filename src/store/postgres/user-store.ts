import type pg from 'pg';
import type { BillingPlan } from '../../domain/billing-plan.js';
import { NotFoundError } from '../../domain/errors.js';
import { canonicalId, newId, parseChosenId } from '../../domain/ids.js';
import type { PageRequest } from '../../domain/pagination.js';
import { columnList, USER_COLUMNS, userWithKeyCountList } from '../columns.js';
import type { NewUser, User, UserChanges, UserPage, UserStore, UserWithKeyCount } from '../contracts/user-store.js';
import { userConflict } from '../user-conflict.js';
import { inTransaction, queryable } from './transaction.js';
import { POSTGRES_DIALECT } from './dialect.js';

/** The constraint a unique violation broke, or null when the error is no unique violation. */
function uniqueViolationOf(error: unknown): string | null {
  const { code, constraint } = (error ?? {}) as { code?: unknown; constraint?: unknown };
  return code === '23505' ? String(constraint) : null;
}

/** The user's new values, and the self row following its name and email (written only when one of them changed). */
const UPDATE_USER_SQL = `WITH updated AS (
    UPDATE users SET email = coalesce($1::text, email), plan = coalesce($2::text, plan),
      name = CASE WHEN $3::boolean THEN $4::text ELSE name END, updated_at = $5::timestamptz
    WHERE id = $6::uuid RETURNING ${columnList(USER_COLUMNS)}
  ), self_row AS (
    UPDATE contacts c SET name = u.name, email = u.email, updated_at = $5::timestamptz FROM updated u
    WHERE c.owner_id = u.id AND c.is_self AND (c.name IS DISTINCT FROM u.name OR c.email IS DISTINCT FROM u.email)
  )
  SELECT ${columnList(USER_COLUMNS)} FROM updated`;

/** The OAuth records bound to the user's keys go in the same statement as the user (keys, contacts and the rest cascade). */
const DELETE_USER_SQL = `WITH oauth AS (
    DELETE FROM oauth_records WHERE account_id IN (SELECT id::text FROM api_keys WHERE owner_id = $1::uuid)
  )
  DELETE FROM users WHERE id = $1::uuid`;

export class PostgresUserStore implements UserStore {
  constructor(private readonly pool: pg.Pool) {}

  async create(user: NewUser): Promise<User> {
    const now = new Date().toISOString();
    const id = user.id === undefined ? newId() : parseChosenId(user.id);
    const created: User = { id, email: user.email, name: user.name, plan: user.plan, created_at: now };
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
      const violated = uniqueViolationOf(error);
      if (violated === null) throw error;
      throw violated === 'users_pkey' ? userConflict('id', id) : userConflict('email', user.email);
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
    const user = await this.update(userId, { plan });
    if (!user) throw new NotFoundError(`No user with id ${userId}`);
    return user;
  }

  async update(userId: string, changes: UserChanges): Promise<User | null> {
    const id = canonicalId(userId);
    if (id === null) return null;
    try {
      const { rows } = await this.pool.query<User>(UPDATE_USER_SQL, [
        changes.email ?? null,
        changes.plan ?? null,
        changes.name !== undefined,
        changes.name ?? null,
        new Date().toISOString(),
        id,
      ]);
      return rows[0] ?? null;
    } catch (error) {
      // The id stays: only the email can be another user's.
      if (uniqueViolationOf(error) === null) throw error;
      throw userConflict('email', changes.email!);
    }
  }

  async delete(userId: string): Promise<boolean> {
    const id = canonicalId(userId);
    if (id === null) return false;
    const { rowCount } = await this.pool.query(DELETE_USER_SQL, [id]);
    return rowCount === 1;
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
