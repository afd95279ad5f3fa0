import type { Contact } from '../domain/contact.js';
import type { ImportMatchField } from '../domain/import-matching.js';
import type { PageRequest } from '../domain/pagination.js';
import type { ContactsFile, ReadTally } from '../import/read-contacts.js';
import type {
  ContactPage,
  ContactPageJson,
  ContactStore,
  FoundContact,
  ListedContact,
  NewUser,
  OwnerBatch,
  Store,
} from '../store/store.js';
import { requireUser, type UserRef } from './users.js';

type UsersAndContacts = Pick<Store, 'users' | 'contacts'>;

/**
 * What the doors read of an owner's contacts. The reads hand the store's promise on as it is (no await, nothing built):
 * the REST listing's first page is served at the rate of its version lookup.
 */
export type ContactReader = Pick<ContactStore, 'listPage' | 'listPageJson' | 'listingVersion' | 'get' | 'getMany' | 'search'>;

/** A page of the owner's listable contacts (not merged, not the self row), ordered by created_at, then id. */
export function listContacts(contacts: ContactReader, ownerId: string, page: PageRequest): Promise<ContactPage> {
  return contacts.listPage(ownerId, page);
}

/** The same page as listContacts, as the list response's JSON with the listing version it belongs to: what REST sends. */
export function listContactsJson(contacts: ContactReader, ownerId: string, page: PageRequest): Promise<ContactPageJson> {
  return contacts.listPageJson(ownerId, page);
}

/** The owner's listing version (every write to the owner's contacts changes it), without reading a contact. */
export function listingVersion(contacts: ContactReader, ownerId: string): Promise<number> {
  return contacts.listingVersion(ownerId);
}

/** One listable contact of the owner; a merged duplicate's id gives the contact it was merged into. Null when none. */
export function getContact(contacts: ContactReader, ownerId: string, id: string): Promise<FoundContact | null> {
  return contacts.get(ownerId, id);
}

/** The owner's listable contacts among `ids` in list order, in one query; a merged or unknown id gives nothing. */
export function getContacts(contacts: ContactReader, ownerId: string, ids: readonly string[]): Promise<ListedContact[]> {
  return contacts.getMany(ownerId, ids);
}

/** The owner's listable contacts matching the words of `query`, best first, at most `limit` (ContactStore.search). */
export function searchContacts(contacts: ContactReader, ownerId: string, query: string, limit: number): Promise<Contact[]> {
  return contacts.search(ownerId, query, limit);
}

/** What an import did with a file's records, as `contacts import --json` prints it; IMPORT_LISTED places at most of each kind. */
export interface ImportSummary {
  imported: number;
  created: number;
  updated: number;
  unchanged: number;
  merged: number;
  /** Records without an id: each became a new contact, unless matching matched it. */
  without_id: number;
  matched_by_email: number;
  matched_by_linkedin_url: number;
  skipped_empty: { count: number; records: string[] };
  duplicate_emails: { count: number; records: { record: string; email: string; same_as: string }[] };
  not_imported: ReturnType<ReadTally['notImported']>;
}

export interface ImportRequest {
  /** The contacts' owner. */
  user: UserRef;
  file: ContactsFile;
  /**
   * The fields on which a record without id updates the owner's contact with the same value, if any (emails compare
   * ignoring ASCII case, LinkedIn URLs as linkedinUrlKey does); absent, the file's format decides: a LinkedIn export's
   * records match on linkedin_url, other files' on nothing.
   */
  match?: readonly ImportMatchField[];
}

/**
 * Imports the file's records for the user as they are read, all or nothing (InputError naming the record that stopped
 * it), and says what became of them, including the records with an email another contact already has.
 */
export async function importContacts(store: UsersAndContacts, request: ImportRequest): Promise<ImportSummary> {
  const { batches, tally } = request.file;
  const owner = await requireUser(store, request.user);
  const outcome = await store.contacts.importBatches(owner.id, batches, { match: request.match });
  const { created, updated, unchanged, merged, matchedByEmail, matchedByLinkedinUrl, duplicateEmails, duplicateEmailCount } = outcome;
  return {
    imported: tally.records,
    created,
    updated,
    unchanged,
    merged,
    without_id: tally.withoutId,
    matched_by_email: matchedByEmail,
    matched_by_linkedin_url: matchedByLinkedinUrl,
    skipped_empty: tally.skippedEmpty,
    duplicate_emails: {
      count: duplicateEmailCount,
      records: duplicateEmails.map(({ label, email, sameAs }) => ({ record: label, email, same_as: sameAs })),
    },
    not_imported: tally.notImported(),
  };
}

/** Soft-merges the user's contact `duplicateId` into `survivorId`: the duplicate leaves listings, its id leads to the survivor. */
export async function mergeContacts(
  store: UsersAndContacts,
  request: { user: UserRef; duplicateId: string; survivorId: string },
): Promise<void> {
  await store.contacts.merge((await requireUser(store, request.user)).id, request.duplicateId, request.survivorId);
}

/**
 * Deletes the user's contacts with the duplicates merged into them, all or nothing; returns how many contacts were
 * named, each once (the duplicates that went with them are not counted).
 */
export async function deleteContacts(store: UsersAndContacts, request: { user: UserRef; ids: readonly string[] }): Promise<number> {
  return store.contacts.delete((await requireUser(store, request.user)).id, request.ids);
}

/**
 * Creates the users whose email no user has yet and imports every batch, each for the user its `owner` names, in one
 * transaction: a bad record anywhere leaves the database unchanged.
 */
export async function bulkImport(
  store: Pick<Store, 'bulkImport'>,
  request: { users: readonly NewUser[]; contacts: AsyncIterable<OwnerBatch> },
): Promise<{ usersCreated: number; contacts: number }> {
  return store.bulkImport(request.users, request.contacts);
}
