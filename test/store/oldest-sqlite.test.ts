import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newId } from '../../src/domain/ids.js';
import { openStore } from '../../src/store/open-store.js';
import type { Store } from '../../src/store/store.js';
import { databaseBefore } from '../support/old-database.js';
import { contactRecord, createUser } from '../support/seed.js';

// The oldest SQLite the schema supports is Debian 12's 3.40.1 (docs/sqlite.md).
const SQLITE3 = '/usr/bin/sqlite3';
/** SQLITE_MAX_FUNCTION_ARG before SQLite 3.48: a schema with a longer call cannot even be opened. */
const MAX_FUNCTION_ARGS = 127;

/**
 * The most items any parenthesized list in `sql` holds. A function's arguments are one such list, so this bounds
 * them without telling calls from column lists (which are no longer).
 */
function longestList(sql: string): number {
  const open: number[] = [];
  let longest = 0;
  for (const [token] of sql.matchAll(/'(?:[^']|'')*'|"(?:[^"]|"")*"|--[^\n]*|\/\*[\s\S]*?\*\/|[(),]/g)) {
    if (token === '(') open.push(1);
    else if (token === ',' && open.length > 0) open[open.length - 1]! += 1;
    else if (token === ')') longest = Math.max(longest, open.pop()!);
  }
  return longest;
}

/** The schema as the migrations up to `lastVersion` leave it. */
async function schemaAfter(lastVersion: number): Promise<string> {
  const database = await databaseBefore('sqlite', lastVersion + 1, null);
  try {
    const rows = await database.query<{ sql: string }>('SELECT sql FROM sqlite_master WHERE sql IS NOT NULL');
    return rows.map((row) => row.sql).join(';\n');
  } finally {
    await database.dispose();
  }
}

describe('the SQLite schema within the limits of SQLite 3.40', () => {
  it(`passes no function more than ${MAX_FUNCTION_ARGS} arguments`, async () => {
    expect(longestList(await schemaAfter(Infinity))).toBeLessThanOrEqual(MAX_FUNCTION_ARGS);
    // What SQLite before 3.48 refused until migration 6: char() with every character the search index trims.
    expect(longestList(await schemaAfter(5))).toBe(201);
  });
});

function skipCli(): boolean {
  if (existsSync(SQLITE3) || process.env.CI === 'true') return false;
  console.warn(`\n*** sqlite3 CLI test: SKIPPED — no sqlite3 at ${SQLITE3} (apt-get install sqlite3). ***\n`);
  return true;
}

describe.runIf(!skipCli())(`Debian's sqlite3 (${SQLITE3}) on a migrated database`, () => {
  let dir: string;
  let path: string;
  let store: Store;
  let owner: string;
  const ids = { ada: newId(), grace: newId(), duplicate: newId() };

  /** Runs sqlite3 on `database` with these SQL statements or dot-commands; fails on the first error. */
  const sqlite3 = (database: string, ...commands: string[]) =>
    execFileSync(SQLITE3, ['-bail', database, ...commands], { encoding: 'utf8' }).trim();
  const searchNames = async (query: string) => {
    const fresh = await openStore({ kind: 'sqlite', path });
    try {
      return (await fresh.contacts.search(owner, query, 10)).map((contact) => contact.name);
    } finally {
      await fresh.close();
    }
  };

  beforeAll(async () => {
    if (!existsSync(SQLITE3)) throw new Error(`no sqlite3 at ${SQLITE3}, and CI=true requires it (.ci/run installs Debian's sqlite3)`);
    dir = mkdtempSync(join(tmpdir(), 'contacts-sqlite3-'));
    path = join(dir, 'contacts.db');
    store = await openStore({ kind: 'sqlite', path });
    await store.migrate();
    owner = (await createUser(store)).id;
    await store.contacts.importContacts(owner, [
      contactRecord({ name: '«Ada» Lovelace', email: 'ada@example.com', tags: ['math'] }, ids.ada),
      contactRecord({ name: '→ Grace Hopper', company: 'Navy' }, ids.grace),
      contactRecord({ name: 'Ada Duplicate' }, ids.duplicate),
    ]);
    await store.contacts.merge(owner, ids.duplicate, ids.ada);
  });
  afterAll(async () => {
    await store?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('finds it intact (pragma integrity_check)', () => {
    expect(sqlite3(path, 'PRAGMA integrity_check')).toBe('ok');
  });

  it('counts the listable contacts the store lists', async () => {
    const { total } = await store.contacts.listPage(owner, { offset: 0, limit: 1 });
    expect(total).toBe(2);
    expect(sqlite3(path, `SELECT count(*) FROM contacts WHERE owner_id = '${owner}' AND merged_into IS NULL AND is_self = 0`)).toBe(
      String(total),
    );
  });

  it('repairs contacts with SQL, keeping the search index in step', async () => {
    sqlite3(
      path,
      `UPDATE contacts SET name = '…Ada Repaired' WHERE id = '${ids.ada}'`,
      `DELETE FROM contacts WHERE id = '${ids.grace}'`,
      "INSERT INTO contact_words (contact_words) VALUES ('integrity-check')",
    );
    expect(sqlite3(path, "SELECT count(*) FROM contact_words WHERE contact_words MATCH 'repaired'")).toBe('1');
    // The JSON sqlite3 stored is the one the service's SQLite stores for the same row.
    const storedBySqlite3 = sqlite3(path, `SELECT api_json FROM contacts WHERE id = '${ids.ada}'`);
    const db = new Database(path);
    db.prepare('UPDATE contacts SET name = name WHERE id = ?').run(ids.ada);
    expect(db.prepare('SELECT api_json FROM contacts WHERE id = ?').pluck().get(ids.ada)).toBe(storedBySqlite3);
    db.close();
    expect(await searchNames('repaired')).toEqual(['…Ada Repaired']);
    expect(await searchNames('lovelace')).toEqual([]);
    expect(await searchNames('navy')).toEqual([]);
  });

  it('backs it up (.backup) to a file that opens', async () => {
    const backup = join(dir, 'backup.db');
    sqlite3(path, `.backup '${backup}'`);
    expect(sqlite3(backup, 'PRAGMA integrity_check')).toBe('ok');
    const restored = await openStore({ kind: 'sqlite', path: backup });
    try {
      expect(await restored.migrate()).toEqual([]);
      expect((await restored.contacts.search(owner, 'repaired', 10)).map((contact) => contact.name)).toEqual(['…Ada Repaired']);
    } finally {
      await restored.close();
    }
  });
});
