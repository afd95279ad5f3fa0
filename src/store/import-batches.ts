import { assertUniqueIds } from '../domain/contact-input.js';
import { IMPORT_LISTED } from '../domain/import-matching.js';
import { refusedRecordMerge } from '../domain/merge.js';
import type { ImportOutcome, ImportRecord } from './contracts/contact-store.js';

/** What one batch's writes did; merges wait until every record is written. */
export type BatchOutcome = Omit<ImportOutcome, 'merged' | 'duplicateEmailCount'>;

/** A record that merges its contact into another, kept in the import's ledger until every record is written. */
export interface PendingMerge {
  /** Its place in the import, counted from 1. */
  seq: number;
  id: string;
  label: string;
  mergedInto: string;
}

/**
 * An import's steps inside its one transaction, as a store runs them. The ledger is a table of that transaction: what
 * the import must remember of every record (its id, its label, its merge) stays in the database, not in memory.
 */
export interface ImportSteps {
  /** The labels of the ledger's records with these ids. */
  earlier(ids: readonly string[]): Promise<Map<string, string>>;
  /** Adds the records that have an id to the ledger, numbered from `firstSeq` in order. */
  note(records: readonly ImportRecord[], firstSeq: number): Promise<void>;
  write(records: readonly ImportRecord[]): Promise<BatchOutcome>;
  /** At most `limit` of the ledger's merges after `afterSeq`, in order. */
  pendingMerges(afterSeq: number, limit: number): Promise<PendingMerge[]>;
  /** Applies one; false when it repeats a merge already made. */
  merge(merge: PendingMerge): Promise<boolean>;
}

const MERGE_PAGE = 1000;

/**
 * Imports the batches in turn, each written before the next is read, so that what the import holds in memory is one
 * batch: a record naming an id an earlier one named is refused (InputError naming both), the emails an earlier batch
 * wrote are in the database when the next one's are compared, and the merges are made once every contact exists.
 */
export async function importBatches(
  steps: ImportSteps,
  batches: AsyncIterable<readonly ImportRecord[]> | Iterable<readonly ImportRecord[]>,
): Promise<ImportOutcome> {
  const outcome: ImportOutcome = {
    created: 0,
    updated: 0,
    unchanged: 0,
    merged: 0,
    matchedByEmail: 0,
    matchedByLinkedinUrl: 0,
    duplicateEmails: [],
    duplicateEmailCount: 0,
  };
  let seq = 0;
  for await (const records of batches) {
    const ids = records.flatMap(({ contact }) => (contact.id === null ? [] : [contact.id]));
    assertUniqueIds(records, ids.length === 0 ? undefined : await steps.earlier(ids));
    await steps.note(records, seq + 1);
    seq += records.length;
    const written = await steps.write(records);
    outcome.created += written.created;
    outcome.updated += written.updated;
    outcome.unchanged += written.unchanged;
    outcome.matchedByEmail += written.matchedByEmail;
    outcome.matchedByLinkedinUrl += written.matchedByLinkedinUrl;
    outcome.duplicateEmailCount += written.duplicateEmails.length;
    outcome.duplicateEmails.push(...written.duplicateEmails.slice(0, IMPORT_LISTED - outcome.duplicateEmails.length));
  }
  for (let after = 0; ;) {
    const merges = await steps.pendingMerges(after, MERGE_PAGE);
    if (merges.length === 0) break;
    for (const merge of merges) {
      try {
        if (await steps.merge(merge)) outcome.merged++;
      } catch (error) {
        throw refusedRecordMerge(merge.label, error);
      }
    }
    after = merges.at(-1)!.seq;
  }
  return outcome;
}
