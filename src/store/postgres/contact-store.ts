import type pg from 'pg';
import type { Contact } from '../../domain/contact.js';
import type { SortKey } from '../../domain/pagination.js';
import type { ChangeLogState, ChangePosition } from '../../domain/changes.js';
import { assertAllOwned, idsToDelete } from '../../domain/contact-deletion.js';
import { refusedRecordMerge } from '../../domain/merge.js';
import { canonicalId } from '../../domain/ids.js';
import { parseSearchRequest, searchMatcher } from '../../domain/search.js';
import { CONTACT_COLUMNS, columnList } from '../columns.js';
import { contactFromRow, type ContactRow } from '../contact-row.js';
import { decideContactWrite } from '../contact-write.js';
import { keysToLookUp, planMatches } from '../import-match.js';
import { idsToGet, listedContactOf, type ListedRow } from '../get-many.js';
import { importBatches, type BatchOutcome } from '../import-batches.js';
import { listableSql } from '../listable.js';
import { MAX_MERGE_HOPS, mergeChainResult } from '../merge-chain.js';
import { ListedContacts } from '../listed-contacts.js';
import type { PagedListingOptions } from '../paged-listing.js';
import { searchAsync } from '../search-plan.js';
import type {
  ChangeRead,
  ContactStore,
  FoundContact,
  ImportMatching,
  ImportOutcome,
  ImportRecord,
  ListedRead,
} from '../contracts/contact-store.js';
import { postgresChangeLog, postgresCountChangesAfter, postgresPositionAt, postgresReadChanges, postgresReadListed } from './changes.js';
import { tidyAfterImport } from './after-import.js';
import { ContactWriter, findHolders, findExisting } from './contact-writer.js';
import { mergeContacts } from './merge.js';
import { postgresPageSource } from './page-source.js';
import { postgresSearchReads } from './search.js';
import { inTransaction } from './transaction.js';
import { POSTGRES_DIALECT } from './dialect.js';
import { utcTimestampText } from './timestamps.js';

/** During an import: existing ids looked up per query. */
const LOOKUP_BATCH = 1000;

/** The end of the merge chain from the id asked for, in one statement (one snapshot). */
const GET_CONTACT_SQL = `
  WITH RECURSIVE chain (id, hops) AS (
    SELECT id, 0 FROM contacts WHERE owner_id = $1::uuid AND id = $2::uuid
    UNION ALL
    SELECT c.merged_into, chain.hops + 1 FROM chain JOIN contacts c ON c.owner_id = $1::uuid AND c.id = chain.id
    WHERE c.merged_into IS NOT NULL AND chain.hops < ${MAX_MERGE_HOPS}
  )
  SELECT ${columnList(CONTACT_COLUMNS, 'c')}, c.is_self, c.merged_into
  FROM chain JOIN contacts c ON c.owner_id = $1::uuid AND c.id = chain.id
  ORDER BY chain.hops DESC LIMIT 1`;

/**
 * The owner's listable contacts among the ids, in list order; created_at as readListed gives it. The ids are looked up
 * by primary key first (a materialized CTE): asked for the owner and the ids at once, a planner without statistics (a
 * fresh import) walks the owner's whole listing index instead, 40 ms for 10 ids of 10,000 contacts.
 */
const GET_MANY_SQL = `
  WITH asked AS MATERIALIZED (
    SELECT owner_id, merged_into, is_self, created_at, id, updated_at, api_json FROM contacts WHERE id = ANY($2::uuid[])
  )
  SELECT ${utcTimestampText('created_at')} AS created_at, id, updated_at, api_json FROM asked
  WHERE ${listableSql(POSTGRES_DIALECT, '$1::uuid', 'asked')} ORDER BY asked.created_at, asked.id`;

/** The chosen contacts of a search, read in full. */
const SEARCH_ROWS_SQL = `SELECT ${columnList(CONTACT_COLUMNS)} FROM contacts WHERE ${listableSql(POSTGRES_DIALECT, '$1')} AND id = ANY($2::uuid[])`;

/**
 * Every statement on an owner's contacts ends by updating the owner's listing row (triggers, migration 3), held
 * to commit. A write transaction locks that row before any contact, so store writes of one owner queue on it
 * instead of deadlocking: an import holding it while a merge holds a contact the import updates next, or two
 * imports updating the same contacts in different orders.
 */
async function lockOwnerListing(client: pg.PoolClient, ownerId: string): Promise<void> {
  const owner = canonicalId(ownerId);
  if (owner !== null) await client.query('SELECT 1 FROM owner_listing WHERE owner_id = $1::uuid FOR NO KEY UPDATE', [owner]);
}

/** A streamed import's ledger (import-batches.ts): a table of its transaction alone. */
const LEDGER_SQL = `CREATE TEMP TABLE import_ledger (seq bigint PRIMARY KEY, id uuid NOT NULL UNIQUE, label text NOT NULL,
  merged_into text) ON COMMIT DROP`;

/** Writes the records, inside the caller's transaction that holds the owner's listing row; merges are the caller's. */
async function writeRecords(
  client: pg.PoolClient,
  ownerId: string,
  records: readonly ImportRecord[],
  matching: ImportMatching,
  now: string,
): Promise<BatchOutcome> {
  const plan = planMatches(records, await findHolders(client, ownerId, keysToLookUp(records, matching)), matching);
  const writer = new ContactWriter(client, ownerId, now);
  for (let start = 0; start < plan.records.length; start += LOOKUP_BATCH) {
    const batch = plan.records.slice(start, start + LOOKUP_BATCH);
    const found = await findExisting(client, batch);
    for (const record of batch) {
      const { id } = record.contact;
      // A contact this import already wrote counts as existing, exactly as when records are written one by one.
      const existing = id === null ? undefined : (writer.written(id) ?? found.get(id));
      await writer.write(decideContactWrite(ownerId, record, existing, now));
    }
  }
  await writer.flush();
  const { matchedByEmail, matchedByLinkedinUrl, duplicateEmails } = plan;
  return { ...writer.counts, matchedByEmail, matchedByLinkedinUrl, duplicateEmails };
}

export class PostgresContactStore extends ListedContacts implements ContactStore {
  constructor(
    private readonly pool: pg.Pool,
    listingOptions: PagedListingOptions,
  ) {
    super(postgresPageSource(pool), listingOptions);
  }

  async get(ownerId: string, id: string): Promise<FoundContact | null> {
    const owner = canonicalId(ownerId);
    const askedId = canonicalId(id);
    if (owner === null || askedId === null) return null;
    const { rows } = await this.pool.query<ContactRow & { is_self: boolean; merged_into: string | null }>({
      name: 'contacts_get',
      text: GET_CONTACT_SQL,
      values: [owner, askedId],
    });
    const row = rows[0];
    if (!row) return null;
    const { is_self, merged_into, ...contact } = row;
    return mergeChainResult(askedId, { contact: contactFromRow(contact), is_self, merged_into });
  }

  async getMany(ownerId: string, ids: readonly string[]): ReturnType<ContactStore['getMany']> {
    const owner = canonicalId(ownerId);
    const wanted = idsToGet(ids);
    if (owner === null || wanted.length === 0) return [];
    const { rows } = await this.pool.query<ListedRow>({ name: 'contacts_get_many', text: GET_MANY_SQL, values: [owner, wanted] });
    return rows.map(listedContactOf);
  }

  async search(ownerId: string, query: string, limit: number): Promise<Contact[]> {
    const request = parseSearchRequest({ query, limit });
    const matcher = searchMatcher(request.query);
    const owner = canonicalId(ownerId);
    if (owner === null || matcher.words.length === 0) return [];
    // One snapshot for the index lookups, the walk and the rows read.
    return inTransaction(
      this.pool,
      async (client) => {
        const found = await searchAsync(postgresSearchReads(client, owner, matcher.words), matcher, request.limit);
        if (found.length === 0) return [];
        const { rows } = await client.query<ContactRow>({
          name: 'contacts_search_rows',
          text: SEARCH_ROWS_SQL,
          values: [owner, found.map((contact) => contact.id)],
        });
        const byId = new Map(rows.map((row) => [row.id, row]));
        // Inside a bulk load's transaction (no snapshot of its own) a contact may have gone meanwhile.
        return found.flatMap((contact) => {
          const row = byId.get(contact.id);
          return row ? [contactFromRow(row)] : [];
        });
      },
      'BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY',
    );
  }

  async importContacts(ownerId: string, records: readonly ImportRecord[], matching: ImportMatching = 'ignore'): Promise<ImportOutcome> {
    const now = new Date().toISOString();
    const outcome = await inTransaction(this.pool, async (client) => {
      await lockOwnerListing(client, ownerId);
      const written = await writeRecords(client, ownerId, records, matching, now);
      let merged = 0;
      for (const { label, contact } of records) {
        if (contact.mergedInto === undefined) continue;
        try {
          if (await mergeContacts(client, ownerId, contact.id!, contact.mergedInto, now, 'no-op')) merged++;
        } catch (error) {
          throw refusedRecordMerge(label, error);
        }
      }
      return { ...written, merged, duplicateEmailCount: written.duplicateEmails.length };
    });
    await tidyAfterImport(this.pool, outcome);
    return outcome;
  }

  async importBatches(
    ownerId: string,
    batches: AsyncIterable<readonly ImportRecord[]>,
    matching: ImportMatching = 'ignore',
  ): Promise<ImportOutcome> {
    const now = new Date().toISOString();
    const outcome = await inTransaction(this.pool, async (client) => {
      await lockOwnerListing(client, ownerId);
      await client.query(LEDGER_SQL);
      // Each batch runs the same named lookups again on a table that grows in this transaction: after five runs
      // PostgreSQL may keep a generic plan that reads every contact of the owner per key (20,000 records took 60 s, not 2).
      await client.query('SET LOCAL plan_cache_mode = force_custom_plan');
      return importBatches(
        {
          earlier: async (ids) => {
            const { rows } = await client.query<{ id: string; label: string }>(
              'SELECT id, label FROM import_ledger WHERE id = ANY($1::uuid[])',
              [ids],
            );
            return new Map(rows.map(({ id, label }) => [id, label]));
          },
          note: async (records, firstSeq) => {
            const noted = records.flatMap(({ label, contact }, index) =>
              contact.id === null ? [] : [{ seq: firstSeq + index, id: contact.id, label, mergedInto: contact.mergedInto ?? null }],
            );
            if (noted.length === 0) return;
            await client.query(
              `INSERT INTO import_ledger (seq, id, label, merged_into)
               SELECT * FROM unnest($1::bigint[], $2::uuid[], $3::text[], $4::text[])`,
              [noted.map((row) => row.seq), noted.map((row) => row.id), noted.map((row) => row.label), noted.map((row) => row.mergedInto)],
            );
          },
          write: (records) => writeRecords(client, ownerId, records, matching, now),
          pendingMerges: async (afterSeq, limit) => {
            const { rows } = await client.query<{ seq: string; id: string; label: string; merged_into: string }>(
              `SELECT seq, id, label, merged_into FROM import_ledger
               WHERE merged_into IS NOT NULL AND seq > $1 ORDER BY seq LIMIT $2`,
              [afterSeq, limit],
            );
            return rows.map((row) => ({ seq: Number(row.seq), id: row.id, label: row.label, mergedInto: row.merged_into }));
          },
          merge: ({ id, mergedInto }) => mergeContacts(client, ownerId, id, mergedInto, now, 'no-op'),
        },
        batches,
      );
    });
    await tidyAfterImport(this.pool, outcome);
    return outcome;
  }

  async merge(ownerId: string, duplicateId: string, survivorId: string): Promise<void> {
    await inTransaction(this.pool, async (client) => {
      await lockOwnerListing(client, ownerId);
      await mergeContacts(client, ownerId, duplicateId, survivorId, new Date().toISOString());
    });
  }

  async delete(ownerId: string, ids: readonly string[]): Promise<number> {
    const wanted = idsToDelete(ids);
    return inTransaction(this.pool, async (client) => {
      await lockOwnerListing(client, ownerId);
      const { rows } = await client.query<{ id: string }>(
        'SELECT id FROM contacts WHERE owner_id = $1::uuid AND id = ANY($2::uuid[]) AND NOT is_self',
        [ownerId, wanted],
      );
      assertAllOwned(wanted, new Set(rows.map((row) => row.id)));
      await client.query('DELETE FROM contacts WHERE owner_id = $1::uuid AND (id = ANY($2::uuid[]) OR merged_into = ANY($2::uuid[]))', [
        ownerId,
        wanted,
      ]);
      return wanted.length;
    });
  }

  async changeLog(ownerId: string): Promise<ChangeLogState> {
    return postgresChangeLog(this.pool, ownerId);
  }

  async readChanges(ownerId: string, after: ChangePosition, limit: number): Promise<ChangeRead> {
    return postgresReadChanges(this.pool, ownerId, after, limit);
  }

  async readListed(ownerId: string, after: SortKey | null, limit: number): Promise<ListedRead> {
    return postgresReadListed(this.pool, ownerId, after, limit);
  }

  async countChangesAfter(ownerId: string, after: ChangePosition): Promise<number> {
    return postgresCountChangesAfter(this.pool, ownerId, after);
  }

  async positionAt(ownerId: string, time: string): Promise<ChangePosition | null> {
    return postgresPositionAt(this.pool, ownerId, time);
  }
}
