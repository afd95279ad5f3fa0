import type Database from 'better-sqlite3';
import { listableSql } from '../listable.js';
import { indexContactWordsSql } from './migrations/search-index.js';
import type { SqliteWriteLock } from './transaction.js';
import { StatementCache } from './statements.js';
import { SQLITE_DIALECT } from './dialect.js';

// A bulk load inserts random ids into several indexes at once: with SQLite's default 2 MB page cache each
// insert evicts pages the next one needs, and the transaction spills to the WAL over and over.
const BULK_CACHE_KIB = -1024 * 1024;

/**
 * Per-row triggers a bulk load replaces with set-based statements: run once per inserted contact, the search
 * index's insert and the listing count's update cost more than the inserts themselves (5× for the index).
 * Update and delete triggers stay, so merges and re-imported contacts keep both exact as they go.
 */
const DEFERRED_TRIGGERS = ['contact_words_insert', 'owner_listing_insert', 'contact_changes_insert'];

/**
 * The state of a bulk load inside its one write transaction: the deferred triggers are dropped, and restored
 * before COMMIT, so no other connection ever sees the schema without them (SQLite's DDL is transactional).
 */
export class SqliteBulkLoad {
  private indexedUpTo: number;

  private constructor(
    private readonly db: Database.Database,
    private readonly firstNewRowid: number,
    private readonly triggers: string[],
  ) {
    this.indexedUpTo = firstNewRowid - 1;
  }

  /**
   * Runs `work` as one bulk load in one write transaction, taken as the write lock says, committed when `work` resolves
   * and rolled back, with nothing changed, when it throws. Between awaits inside `work` the transaction stays open, so
   * nothing else may use the connection meanwhile: for a command that does only this (`bulk-import`).
   */
  static async run<T>(db: Database.Database, writeLock: SqliteWriteLock, work: (load: SqliteBulkLoad) => Promise<T>): Promise<T> {
    return withBulkCache(db, async () => {
      try {
        if (!(await writeLock.begin())) throw new Error('a bulk load cannot join a transaction already open');
        const load = SqliteBulkLoad.within(db);
        const result = await work(load);
        load.finish();
        db.exec('COMMIT');
        return result;
      } catch (error) {
        if (db.inTransaction) db.exec('ROLLBACK');
        throw error;
      }
    });
  }

  /** Runs synchronous `work` as one bulk load: one write transaction (or a savepoint of the one open), within one turn. */
  static async runNow<T>(db: Database.Database, writeLock: SqliteWriteLock, work: (load: SqliteBulkLoad) => T): Promise<T> {
    return withBulkCache(db, () =>
      writeLock.run(() => {
        const load = SqliteBulkLoad.within(db);
        const result = work(load);
        load.finish();
        return result;
      }),
    );
  }

  /**
   * Begins a bulk load inside the write transaction open on `db`, from its next inserted contact on; `finish` it before
   * COMMIT. The contacts inserted before are already indexed and counted by the triggers.
   */
  static within(db: Database.Database): SqliteBulkLoad {
    const triggers = DEFERRED_TRIGGERS.map((name) => {
      const row = StatementCache.of(db).get("SELECT sql FROM sqlite_master WHERE type = 'trigger' AND name = ?").get(name) as
        { sql: string } | undefined;
      if (!row) throw new Error(`trigger ${name} is missing: run migrations first`);
      db.exec(`DROP TRIGGER ${name}`);
      return row.sql;
    });
    // Rowids are assigned above the largest one, so the load's rows are exactly those past it.
    const { last } = StatementCache.of(db).get('SELECT coalesce(max(rowid), 0) AS last FROM contacts').get() as { last: number };
    return new SqliteBulkLoad(db, last + 1, triggers);
  }

  /**
   * Adds the contacts inserted since the last call to the search index. Called after each batch's inserts and
   * before its merges and updates, whose triggers expect every listable contact to be indexed already.
   */
  indexNewContacts(): void {
    const { last } = StatementCache.of(this.db).get('SELECT coalesce(max(rowid), 0) AS last FROM contacts').get() as { last: number };
    if (last <= this.indexedUpTo) return;
    StatementCache.of(this.db).get(indexContactWordsSql('rowid > ? AND rowid <= ?')).run(this.indexedUpTo, last);
    this.indexedUpTo = last;
  }

  /**
   * Recounts the owners the load inserted contacts for, bumps their versions and change seqs, records the inserted
   * contacts' changes, and restores the triggers. Every batch went through `indexNewContacts`, and the users' self
   * rows are never indexed or recorded.
   */
  finish(): void {
    StatementCache.of(this.db)
      .get(
        `UPDATE owner_listing SET version = version + 1, change_seq = change_seq + 1,
           total = (SELECT count(*) FROM contacts c WHERE ${listableSql(SQLITE_DIALECT, 'owner_listing.owner_id', 'c')})
         WHERE owner_id IN (SELECT owner_id FROM contacts WHERE rowid >= ?)`,
      )
      .run(this.firstNewRowid);
    StatementCache.of(this.db)
      .get(
        `INSERT OR REPLACE INTO contact_changes (owner_id, contact_id, seq, changed_at)
         SELECT c.owner_id, c.id, l.change_seq, strftime('%Y-%m-%dT%H:%M:%fZ', 'now')
         FROM contacts c JOIN owner_listing l ON l.owner_id = c.owner_id WHERE c.rowid >= ? AND c.is_self = 0`,
      )
      .run(this.firstNewRowid);
    for (const sql of this.triggers) this.db.exec(sql);
  }
}

async function withBulkCache<T>(db: Database.Database, work: () => Promise<T>): Promise<T> {
  const cacheSize = StatementCache.of(db).get('PRAGMA cache_size').pluck().get() as number;
  db.exec(`PRAGMA cache_size = ${BULK_CACHE_KIB}`);
  try {
    return await work();
  } finally {
    db.exec(`PRAGMA cache_size = ${cacheSize}`);
  }
}
