import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openStore } from '../../src/store/open-store.js';
import type { SearchScope } from '../../src/store/search-plan.js';
import { sqliteSearchReads } from '../../src/store/sqlite/search.js';

// A lookup's cost stays within its LIMIT only while the word index drives it: driven by the owner's contacts in list
// order instead, it asks the index about each contact (300 ms for 3,500 contacts on a database without statistics).
describe('SQLite search lookups read the word index first', () => {
  let dir: string;
  let db: Database.Database;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'contacts-search-lookup-'));
    const path = join(dir, 'contacts.db');
    const store = await openStore({ kind: 'sqlite', path });
    await store.migrate();
    await store.close();
    db = new Database(path);
  });
  afterAll(() => {
    db.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const plans = (scope: SearchScope, after: { created_at: string; id: string } | null) => {
    const statements: string[] = [];
    const prepare = (sql: string) => {
      statements.push(sql);
      return db.prepare(sql);
    };
    sqliteSearchReads(prepare, '00000000-0000-4000-8000-000000000000', ['quinn', 'lee']).lookup(scope, after, 100);
    return statements.map((sql) =>
      db
        .prepare(`EXPLAIN QUERY PLAN ${sql}`)
        .all({ owner: '', match: 'x', max: 1, created_at: '', id: '' })
        .map((step) => (step as { detail: string }).detail),
    );
  };

  for (const scope of ['exact', 'prefix', 'words'] as const) {
    for (const after of [null, { created_at: '2024-01-01T00:00:00.000Z', id: '00000000-0000-4000-8000-000000000001' }]) {
      it(`${scope} lookup ${after === null ? 'from the start' : 'after a walk position'}`, () => {
        for (const steps of plans(scope, after)) {
          const reads = steps.filter((step) => /^(SCAN|SEARCH) (w|c)\b/.test(step));
          expect(reads).toEqual(['SCAN w VIRTUAL TABLE INDEX 0:M3', 'SEARCH c USING INTEGER PRIMARY KEY (rowid=?)']);
        }
      });
    }
  }
});
