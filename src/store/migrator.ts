import type { Dialect } from './contracts/dialect.js';
import type { Migration, MigrationConnection } from './contracts/migration.js';

export type { Migration } from './contracts/migration.js';

export function pendingMigrations(all: readonly Migration[], applied: ReadonlySet<number>): Migration[] {
  return [...all].sort((a, b) => a.version - b.version).filter((migration) => !applied.has(migration.version));
}

/** Applies the pending migrations, in order, all in one transaction that holds the migration lock. Returns the versions applied. */
export async function runMigrations(
  dialect: Dialect,
  connection: MigrationConnection,
  migrations: readonly Migration[],
): Promise<number[]> {
  if (connection.peekAppliedVersions && pendingMigrations(migrations, await connection.peekAppliedVersions()).length === 0) return [];
  return connection.inTransaction(async (session) => {
    await dialect.acquireMigrationLock(session);
    await session.exec(dialect.migrationsTableSql);
    const pending = pendingMigrations(migrations, await session.appliedVersions());
    for (const migration of pending) {
      await session.exec(migration.sql);
      await session.record(migration, new Date().toISOString());
    }
    return pending.map((migration) => migration.version);
  });
}
