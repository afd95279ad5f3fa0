import type { Dialect } from './contracts/dialect.js';

/*
 * A contact is listable when it is neither soft-merged into another contact (merged_into is null) nor its owner's
 * own self row (is_self). Only listable contacts are listed, counted, searched and found by id; an id that was
 * merged leads to its survivor (merge-chain.ts). owner_listing's count is kept by triggers that test the same rule
 * (each dialect's migrations.ts; frozen text).
 *
 * `owner` is the dialect's placeholder for the owner's id; `row` the table's alias, if any.
 */

export function listableSql(dialect: Dialect, owner: string, row?: string): string {
  const column = (name: string) => (row === undefined ? name : `${row}.${name}`);
  return `${column('owner_id')} = ${owner} AND ${column('merged_into')} IS NULL AND ${dialect.isFalse(column('is_self'))}`;
}
