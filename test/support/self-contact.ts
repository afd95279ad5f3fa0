import Database from 'better-sqlite3';
import { keptForLife } from '../../src/store/sqlite/connection.js';
import { StatementCache } from '../../src/store/sqlite/statements.js';
import pg from 'pg';
import { parseDatabaseUrl } from '../../src/domain/database-url.js';

/** The id of a user's own self row, which no API shows: read straight from the test database. */
export async function selfContactId(databaseUrl: string, ownerId: string): Promise<string> {
  const target = parseDatabaseUrl(databaseUrl);
  if (target.kind === 'sqlite') {
    const db = keptForLife(new Database(target.path, { readonly: true }));
    try {
      const row = StatementCache.of(db).get('SELECT id FROM contacts WHERE owner_id = ? AND is_self = 1').get(ownerId) as { id: string };
      return row.id;
    } finally {
      db.close();
    }
  }
  const client = new pg.Client({ connectionString: target.url });
  await client.connect();
  try {
    const { rows } = await client.query<{ id: string }>('SELECT id FROM contacts WHERE owner_id = $1 AND is_self', [ownerId]);
    return rows[0]!.id;
  } finally {
    await client.end();
  }
}
