import type { ChangeLogState, ChangePosition } from '../../domain/changes.js';
import type { Contact } from '../../domain/contact.js';
import type { ValidContactInput } from '../../domain/contact-input.js';
import type { ImportMatchField, RecordOrigin } from '../../domain/import-matching.js';
import type { PageRequest, SortKey } from '../../domain/pagination.js';

/**
 * One record of an import, with where it came from (`line 4`, `record 2`) for error messages. The contact has passed
 * normalizeContactInput, so every database stores it as it is.
 */
export interface ImportRecord {
  label: string;
  contact: ValidContactInput;
  /** The export it was read from, when another product's (its contact's `source`, what it is matched on by default). */
  origin?: RecordOrigin;
}

/** What an import did with its records. */
export interface ImportOutcome {
  /** Contacts created. */
  created: number;
  /** Existing contacts with at least one field changed. */
  updated: number;
  /** Records naming existing contacts whose every named field already held the record's value. */
  unchanged: number;
  /** Soft merges the import made (a record's `merged_into`); repeated ones are not counted. */
  merged: number;
  /** Records without id that updated the contact holding their email (matched on `email`). */
  matchedByEmail: number;
  /** Records without id that updated the contact holding their LinkedIn URL (matched on `linkedin_url`). */
  matchedByLinkedinUrl: number;
  /**
   * Records naming an email that another contact already holds, a stored one or one an earlier record wrote: the first
   * IMPORT_LISTED (domain/import-matching.ts) of a streamed import, every one of an import of an array.
   */
  duplicateEmails: DuplicateEmail[];
  /** How many records named such an email. */
  duplicateEmailCount: number;
}

/**
 * What an import does with the emails and LinkedIn URLs its records name, compared by their keys (import-match.ts)
 * among the owner's listable contacts: nothing (`ignore`, the bulk path); else it reports the duplicate emails and
 * matches each record without id on the fields of `match` (none: `[]`), or, without `match`, on its origin's
 * (a LinkedIn export's records: linkedin_url), updating the contact that holds the same value.
 */
export type ImportMatching = 'ignore' | { match?: readonly ImportMatchField[] };

/** A record whose email another contact holds: `sameAs` is `contact <id>` or the label of an earlier record. */
export interface DuplicateEmail {
  label: string;
  email: string;
  sameAs: string;
}

/** The contacts of one owner (email or id) within a bulk load. */
export interface OwnerBatch {
  owner: string;
  records: ImportRecord[];
}

export interface ContactPage {
  contacts: Contact[];
  total: number;
}

/** A contact fetched by id; `mergedFrom` is the id asked for when it had been soft-merged into `contact`. */
export interface FoundContact {
  contact: Contact;
  mergedFrom: string | null;
}

/** A page as the list response's JSON bytes, ready to send, with how many contacts it holds and the owner's total. */
export interface ContactPageJson {
  /** `{"data":[…],"pagination":{…}}`: text, or UTF-8 bytes for a page read often (bytes need no encoding to send). */
  json: string | Buffer;
  returned: number;
  total: number;
  /** The owner's listing version the page belongs to; every write to the owner's contacts changes it. */
  version: number;
}

/** A contact in an owner's change log, with its state now (`json` is its API JSON while it is listable). */
export interface ChangeRecord {
  contactId: string;
  seq: number;
  changedAt: string;
  /**
   * A merged contact carries its name and its survivor's; a gone one the name it had when deleted (null when it left
   * the owner otherwise, or had none).
   */
  state:
    | { kind: 'listable'; json: string }
    | { kind: 'merged'; mergedInto: string; name: string | null; mergedIntoName: string | null }
    | { kind: 'gone'; name: string | null };
}

/** The owner's change log after a position, read in one snapshot with the log's state. */
export interface ChangeRead {
  log: ChangeLogState;
  records: ChangeRecord[];
}

/** A listable contact as a walk from since=0 sends it: where it sits in the list order, and its API JSON. */
export interface ListedContact {
  key: SortKey;
  updatedAt: string;
  json: string;
}

/** Listable contacts after a sort key, read in one snapshot with the change log's state. */
export interface ListedRead {
  log: ChangeLogState;
  contacts: ListedContact[];
}

/** Every operation takes the owner whose contacts it reads or writes: there is no unscoped access. */
export interface ContactStore {
  /** Listable contacts (not merged, not the self row) ordered by created_at, then id. */
  listPage(ownerId: string, page: PageRequest): Promise<ContactPage>;
  /** The same page as listPage, as the list response's JSON (contacts serialized by the database): what the HTTP API sends. */
  listPageJson(ownerId: string, page: PageRequest): Promise<ContactPageJson>;
  /**
   * The owner's listing version, as listPageJson would report it now (from the same cached state), without reading a
   * contact: what a conditional request compares its entity tag with.
   */
  listingVersion(ownerId: string): Promise<number>;
  /**
   * One listable contact of the owner. An id that was soft-merged gives the contact it was merged into.
   * Null alike for an unknown id, another owner's contact, the self row and a malformed (non-UUID) id.
   */
  get(ownerId: string, id: string): Promise<FoundContact | null>;
  /**
   * The owner's listable contacts among `ids`, in list order, as readListed gives them, in one query. Unlike get, a
   * merged id gives nothing; an unknown id, another owner's contact, the self row and a malformed id give nothing
   * alike; an id asked twice comes once. Throws InputError for more than GET_MANY_MAX_IDS (get-many.ts) ids.
   */
  getMany(ownerId: string, ids: readonly string[]): Promise<ListedContact[]>;
  /**
   * Listable contacts in which each word of the query starts a word of the name, email, company, title, school,
   * location or a tag (searchWords: case, Latin accents and punctuation ignored), best first (SearchRank), then in
   * list order. The query is text, never syntax; it is validated by parseSearchRequest (throws InputError).
   */
  search(ownerId: string, query: string, limit: number): Promise<Contact[]>;
  /**
   * Inserts the records, or updates those whose id the owner already has, all in one transaction. A record whose
   * named fields all hold what is stored writes nothing: no updated_at, no change recorded. `matching` says what the
   * records' emails and LinkedIn URLs do (planMatches in import-match.ts); by default nothing. A record with an
   * origin gives a contact it creates its origin's `source`, unless it names one.
   * Throws InputError naming the record when an id belongs to another owner or to the self row.
   */
  importContacts(ownerId: string, records: readonly ImportRecord[], matching?: ImportMatching): Promise<ImportOutcome>;
  /**
   * Imports the batches as importContacts does an array, in one transaction, each batch written before the next is
   * read: its cost does not grow with the number of records (importBatches in import-batches.ts). A record naming an
   * id an earlier one named is refused (InputError naming both); when the batches throw, nothing is imported.
   */
  importBatches(ownerId: string, batches: AsyncIterable<readonly ImportRecord[]>, matching?: ImportMatching): Promise<ImportOutcome>;
  /** Soft-merges `duplicateId` into `survivorId`; both must be the owner's listable contacts. */
  merge(ownerId: string, duplicateId: string, survivorId: string): Promise<void>;
  /**
   * Deletes the owner's contacts (listable or merged), with the duplicates merged into them, in one transaction.
   * Throws InputError naming an id that is not one of the owner's contacts (the self row included); nothing is deleted then.
   */
  delete(ownerId: string, ids: readonly string[]): Promise<number>;
  /** Where the owner's change log stands. */
  changeLog(ownerId: string): Promise<ChangeLogState>;
  /** At most `limit` contacts whose last change comes after `after`, in change order, with the log's state. */
  readChanges(ownerId: string, after: ChangePosition, limit: number): Promise<ChangeRead>;
  /** At most `limit` listable contacts after `after` (from the first when null) in list order, with the log's state. */
  readListed(ownerId: string, after: SortKey | null, limit: number): Promise<ListedRead>;
  /** How many contacts' last change comes after `after` (an endpoint's lag, in events). */
  countChangesAfter(ownerId: string, after: ChangePosition): Promise<number>;
  /**
   * The position just before the first change recorded at or after `time` (a replay's start): reading changes after it
   * gives every contact whose last change was at `time` or later. The log's current position when there is none.
   * Null when the log does not reach back to `time`: a TRUNCATE of contacts after it cleared the log (changes_from).
   * How long the log keeps changes (the retention) is the caller's to check.
   */
  positionAt(ownerId: string, time: string): Promise<ChangePosition | null>;
}
