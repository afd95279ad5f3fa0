import type { Contact } from '../../domain/contact.js';
import type { SortKey } from '../../domain/pagination.js';
import type { ChangeLogState, ChangePosition } from '../../domain/changes.js';
import { assertAllOwned, idsToDelete } from '../../domain/contact-deletion.js';
import { refusedRecordMerge } from '../../domain/merge.js';
import { canonicalId } from '../../domain/ids.js';
import type { ImportMatchField } from '../../domain/import-matching.js';
import { parseSearchRequest, searchMatcher } from '../../domain/search.js';
import { CONTACT_COLUMNS, columnList, JSON_COLUMNS } from '../columns.js';
import { contactFromRow, type ContactRow } from '../contact-row.js';
import { decideContactWrite } from '../contact-write.js';
import { addHolders, keysToLookUp, MATCH_INDEXES, matchKeySql, planMatches, type StoredHolders } from '../import-match.js';
import { idsToGet, listedContactOf, type ListedRow } from '../get-many.js';
import { importBatches, type BatchOutcome } from '../import-batches.js';
import { listableSql } from '../listable.js';
import { MAX_MERGE_HOPS, mergeChainResult } from '../merge-chain.js';
import { ListedContacts } from '../listed-contacts.js';
import type { PagedListingOptions } from '../paged-listing.js';
import { searchSync } from '../search-plan.js';
import type {
  ChangeRead,
  ContactStore,
  FoundContact,
  ImportMatching,
  ImportOutcome,
  ImportRecord,
  ListedRead,
} from '../contracts/contact-store.js';
import { SqliteBulkLoad } from './bulk-load.js';
import { sqliteChangeLog, sqliteCountChangesAfter, sqlitePositionAt, sqliteReadChanges, sqliteReadListed } from './changes.js';
import { ContactWriter } from './contact-writer.js';
import { mergeContacts } from './merge.js';
import { sqlitePageSource } from './page-source.js';
import { sqliteSearchReads } from './search.js';
import type { Row, StatementCache } from './statements.js';
import type { SqliteWriteLock } from './transaction.js';
import { SQLITE_DIALECT } from './dialect.js';

const CONTACT_SELECT = columnList(CONTACT_COLUMNS, 'c');

/** The end of the merge chain from the id asked for, in one statement (one snapshot). */
const GET_CONTACT_SQL = `
  WITH RECURSIVE chain (id, hops) AS (
    SELECT id, 0 FROM contacts WHERE owner_id = @owner AND id = @id
    UNION ALL
    SELECT c.merged_into, chain.hops + 1 FROM chain JOIN contacts c ON c.owner_id = @owner AND c.id = chain.id
    WHERE c.merged_into IS NOT NULL AND chain.hops < ${MAX_MERGE_HOPS}
  )
  SELECT ${CONTACT_SELECT}, c.is_self, c.merged_into FROM contacts c
  WHERE c.owner_id = @owner AND c.id = (SELECT id FROM chain ORDER BY hops DESC LIMIT 1)`;

/**
 * The owner's listable contacts among a JSON array of ids, in list order. CROSS JOIN keeps the ids the outer loop, each
 * found by (owner, id): otherwise the planner walks the owner's whole listing index (1.1 ms against 0.06 ms for 10 ids
 * of 10,000 contacts).
 */
const GET_MANY_SQL = `SELECT c.created_at, c.id, c.updated_at, c.api_json
  FROM json_each(@ids) AS asked CROSS JOIN contacts c ON c.id = asked.value
  WHERE ${listableSql(SQLITE_DIALECT, '@owner', 'c')} ORDER BY c.created_at, c.id`;

/**
 * Imports from this many contacts up run as a bulk load. A bulk load drops and restores triggers, a schema change:
 * every other connection prepares its statements again, and one preparing a statement on the search table at that
 * moment can fail (SQLITE_SCHEMA from the virtual table's constructor; the sqlite3 shell gives up there). Below this,
 * the per-row triggers cost less than that.
 */
const BULK_LOAD_MIN_CONTACTS = 10_000;

/** During an import: keys looked up per query. */
const KEY_LOOKUP_BATCH = 500;

/**
 * The owner's listable contacts holding each of a JSON array of keys of the field. The index is named: without
 * statistics the planner prefers the listing's index, which reads every contact of the owner.
 */
function holdersSql(field: ImportMatchField): string {
  const key = matchKeySql(SQLITE_DIALECT, field);
  return `SELECT id, ${key} AS key FROM contacts INDEXED BY ${MATCH_INDEXES[field]}
  WHERE ${listableSql(SQLITE_DIALECT, '?')} AND ${field} IS NOT NULL AND ${key} IN (SELECT value FROM json_each(?))
  ORDER BY created_at, id`;
}
const HOLDERS_SQL = { email: holdersSql('email'), linkedin_url: holdersSql('linkedin_url') };

const CONTACT_BY_ROWID_SQL = `SELECT ${CONTACT_SELECT} FROM contacts c WHERE c.rowid = ?`;

/** A streamed import's ledger (import-batches.ts): a table of the import connection alone, emptied before COMMIT. */
const LEDGER_SQL = `CREATE TEMP TABLE IF NOT EXISTS import_ledger (seq INTEGER PRIMARY KEY, id TEXT NOT NULL UNIQUE,
  label TEXT NOT NULL, merged_into TEXT)`;
const LEDGER_EARLIER_SQL = 'SELECT id, label FROM temp.import_ledger WHERE id IN (SELECT value FROM json_each(?))';
const LEDGER_MERGES_SQL = `SELECT seq, id, label, merged_into FROM temp.import_ledger
  WHERE merged_into IS NOT NULL AND seq > ? ORDER BY seq LIMIT ?`;

export class SqliteContactStore extends ListedContacts implements ContactStore {
  /** Set while a bulk load of many owners runs: each owner's import joins it. */
  bulkLoad: SqliteBulkLoad | null = null;
  private importer: SqliteContactStore | undefined;
  private importQueue: Promise<unknown> = Promise.resolve();

  constructor(
    private readonly statements: StatementCache,
    private readonly writeLock: SqliteWriteLock,
    listingOptions: PagedListingOptions,
    /** Opens the connection streamed imports use; without it (an in-memory database) they use this store's. */
    private readonly openImporter?: () => SqliteContactStore,
  ) {
    super(
      sqlitePageSource(statements.db, (sql) => statements.get(sql)),
      listingOptions,
    );
  }

  async get(ownerId: string, id: string): Promise<FoundContact | null> {
    const owner = canonicalId(ownerId);
    const askedId = canonicalId(id);
    if (owner === null || askedId === null) return null;
    const row = this.statements.get(GET_CONTACT_SQL).get({ owner, id: askedId }) as Row | undefined;
    if (!row) return null;
    const { is_self: isSelf, merged_into: mergedInto, ...contact } = row;
    return mergeChainResult(askedId, {
      contact: decodeContact(contact),
      is_self: isSelf === 1,
      merged_into: mergedInto as string | null,
    });
  }

  async getMany(ownerId: string, ids: readonly string[]): ReturnType<ContactStore['getMany']> {
    const owner = canonicalId(ownerId);
    const wanted = idsToGet(ids);
    if (owner === null || wanted.length === 0) return [];
    const rows = this.statements.get(GET_MANY_SQL).all({ owner, ids: JSON.stringify(wanted) }) as ListedRow[];
    return rows.map(listedContactOf);
  }

  async search(ownerId: string, query: string, limit: number): Promise<Contact[]> {
    const request = parseSearchRequest({ query, limit });
    const matcher = searchMatcher(request.query);
    const owner = canonicalId(ownerId);
    if (owner === null) return [];
    const prepare = (sql: string) => this.statements.get(sql);
    // One read transaction: the index lookups, the walk and the rows read agree on one snapshot.
    const rows = this.statements.db.transaction(() =>
      searchSync(sqliteSearchReads(prepare, owner, matcher.words), matcher, request.limit).map(
        (found) => prepare(CONTACT_BY_ROWID_SQL).get(found.row_id) as Row,
      ),
    )();
    return rows.map(decodeContact);
  }

  /** An import joins the bulk load it is part of; otherwise it is one of its own when large, and writes row by row when not. */
  async importContacts(ownerId: string, records: readonly ImportRecord[], matching: ImportMatching = 'ignore'): Promise<ImportOutcome> {
    const { bulkLoad } = this;
    if (bulkLoad === null && records.length >= BULK_LOAD_MIN_CONTACTS)
      return SqliteBulkLoad.runNow(this.statements.db, this.writeLock, (load) => this.writeImport(load, ownerId, records, matching));
    return this.writeLock.run(() => this.writeImport(bulkLoad, ownerId, records, matching));
  }

  /**
   * Streamed imports run one at a time on the import connection (`openImporter`), never on the one every request shares:
   * their transaction stays open while the batches arrive, and a request's statements would join it there.
   */
  async importBatches(
    ownerId: string,
    batches: AsyncIterable<readonly ImportRecord[]>,
    matching: ImportMatching = 'ignore',
  ): Promise<ImportOutcome> {
    this.importer ??= this.openImporter?.() ?? this;
    const importer = this.importer;
    const imported = this.importQueue.then(() => importer.importHere(ownerId, batches, matching));
    this.importQueue = imported.catch(() => undefined);
    return imported;
  }

  private async importHere(
    ownerId: string,
    batches: AsyncIterable<readonly ImportRecord[]>,
    matching: ImportMatching,
  ): Promise<ImportOutcome> {
    const { db } = this.statements;
    const now = new Date().toISOString();
    return this.writeLock.runHoldingTurn(async () => {
      db.exec(LEDGER_SQL);
      let load: SqliteBulkLoad | null = null;
      let records = 0;
      const outcome = await importBatches(
        {
          earlier: async (ids) => {
            const rows = this.statements.get(LEDGER_EARLIER_SQL).all(JSON.stringify(ids)) as { id: string; label: string }[];
            return new Map(rows.map(({ id, label }) => [id, label]));
          },
          note: async (batch, firstSeq) => {
            const insert = this.statements.get('INSERT INTO temp.import_ledger (seq, id, label, merged_into) VALUES (?, ?, ?, ?)');
            batch.forEach(({ label, contact }, index) => {
              if (contact.id !== null) insert.run(firstSeq + index, contact.id, label, contact.mergedInto ?? null);
            });
          },
          write: async (batch) => {
            records += batch.length;
            // From here on the triggers' per-row work is done in sets, as by an import of an array this large.
            if (load === null && records >= BULK_LOAD_MIN_CONTACTS) load = SqliteBulkLoad.within(db);
            return this.writeRecords(load, ownerId, batch, matching, now);
          },
          pendingMerges: async (afterSeq, limit) =>
            (this.statements.get(LEDGER_MERGES_SQL).all(afterSeq, limit) as Row[]).map((row) => ({
              seq: row.seq as number,
              id: row.id as string,
              label: row.label as string,
              mergedInto: row.merged_into as string,
            })),
          merge: async ({ id, mergedInto }) => mergeContacts(this.statements, ownerId, id, mergedInto, now, 'no-op'),
        },
        batches,
      );
      (load as SqliteBulkLoad | null)?.finish();
      db.exec('DELETE FROM temp.import_ledger');
      return outcome;
    });
  }

  private writeImport(
    load: SqliteBulkLoad | null,
    ownerId: string,
    records: readonly ImportRecord[],
    matching: ImportMatching,
  ): ImportOutcome {
    const now = new Date().toISOString();
    const written = this.writeRecords(load, ownerId, records, matching, now);
    let merged = 0;
    for (const { label, contact } of records) {
      if (contact.mergedInto === undefined) continue;
      try {
        if (mergeContacts(this.statements, ownerId, contact.id!, contact.mergedInto, now, 'no-op')) merged++;
      } catch (error) {
        throw refusedRecordMerge(label, error);
      }
    }
    return { ...written, merged, duplicateEmailCount: written.duplicateEmails.length };
  }

  /** Writes the records inside the caller's write transaction; merges are the caller's. */
  private writeRecords(
    load: SqliteBulkLoad | null,
    ownerId: string,
    records: readonly ImportRecord[],
    matching: ImportMatching,
    now: string,
  ): BatchOutcome {
    const writer = new ContactWriter(this.statements, ownerId, now);
    const plan = planMatches(records, this.holders(ownerId, keysToLookUp(records, matching)), matching);
    for (const record of plan.records) {
      const { id } = record.contact;
      writer.write(decideContactWrite(ownerId, record, id === null ? undefined : writer.existing(id), now));
    }
    load?.indexNewContacts();
    const { matchedByEmail, matchedByLinkedinUrl, duplicateEmails } = plan;
    return { ...writer.counts, matchedByEmail, matchedByLinkedinUrl, duplicateEmails };
  }

  /** The owner's listable contacts holding each of the keys of each field, in list order. */
  private holders(ownerId: string, keys: Record<ImportMatchField, string[]>): StoredHolders {
    const holdersOf = (field: ImportMatchField) => {
      const holders = new Map<string, string[]>();
      const statement = this.statements.get(HOLDERS_SQL[field]);
      for (let start = 0; start < keys[field].length; start += KEY_LOOKUP_BATCH) {
        const rows = statement.all(ownerId, JSON.stringify(keys[field].slice(start, start + KEY_LOOKUP_BATCH)));
        addHolders(holders, rows as { id: string; key: string }[]);
      }
      return holders;
    };
    return { email: holdersOf('email'), linkedin_url: holdersOf('linkedin_url') };
  }

  async merge(ownerId: string, duplicateId: string, survivorId: string): Promise<void> {
    await this.writeLock.run(() => mergeContacts(this.statements, ownerId, duplicateId, survivorId, new Date().toISOString()));
  }

  async delete(ownerId: string, ids: readonly string[]): Promise<number> {
    const wanted = idsToDelete(ids);
    const list = JSON.stringify(wanted);
    return this.writeLock.run(() => {
      const owned = this.statements
        .get('SELECT id FROM contacts WHERE owner_id = ? AND id IN (SELECT value FROM json_each(?)) AND is_self = 0')
        .pluck()
        .all(ownerId, list) as string[];
      assertAllOwned(wanted, new Set(owned));
      // One statement: a duplicate and the contact it is merged into go together, so the merge reference never dangles.
      this.statements
        .get(
          'DELETE FROM contacts WHERE owner_id = ? AND (id IN (SELECT value FROM json_each(?)) OR merged_into IN (SELECT value FROM json_each(?)))',
        )
        .run(ownerId, list, list);
      return wanted.length;
    });
  }

  async changeLog(ownerId: string): Promise<ChangeLogState> {
    return sqliteChangeLog(this.statements, ownerId);
  }

  async readChanges(ownerId: string, after: ChangePosition, limit: number): Promise<ChangeRead> {
    return sqliteReadChanges(this.statements, ownerId, after, limit);
  }

  async readListed(ownerId: string, after: SortKey | null, limit: number): Promise<ListedRead> {
    return sqliteReadListed(this.statements, ownerId, after, limit);
  }

  async countChangesAfter(ownerId: string, after: ChangePosition): Promise<number> {
    return sqliteCountChangesAfter(this.statements, ownerId, after);
  }

  async positionAt(ownerId: string, time: string): Promise<ChangePosition | null> {
    return sqlitePositionAt(this.statements, ownerId, time);
  }
}

function decodeContact(row: Row): Contact {
  for (const column of JSON_COLUMNS) {
    if (row[column] !== null) row[column] = JSON.parse(row[column] as string);
  }
  return contactFromRow(row as ContactRow);
}
