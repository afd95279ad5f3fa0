import type pg from 'pg';

/**
 * Removes up to `maxRows` rows of `table` whose `column` (a timestamptz) is before `before`, oldest first, and returns
 * how many: a bounded batch, so a prune never holds locks on much of the table.
 */
export async function pruneOldest(pool: pg.Pool, table: string, column: string, before: string, maxRows: number): Promise<number> {
  const { rowCount } = await pool.query(
    `DELETE FROM ${table} WHERE ctid IN (
       SELECT ctid FROM ${table} WHERE ${column} < $1::timestamptz ORDER BY ${column} LIMIT $2::int)`,
    [before, maxRows],
  );
  return rowCount ?? 0;
}
