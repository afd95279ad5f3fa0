import type { Contact } from 'contacts-read-api-client';
import { vcardCard } from '../export/formats/vcard-card.js';
import { contentEtag } from '../web/conditional.js';
import { listingBatches, readListedAfter, type ChangeLogReader } from '../operations/change-feed.js';
import type { ListedRead } from '../store/store.js';
import { cardPath } from './paths.js';

export const CARD_CONTENT_TYPE = 'text/vcard; charset=utf-8';
/** Contacts read per query when an answer walks the listing: a page's cards are built and sent before the next read. */
export const LISTING_PAGE_SIZE = 500;

/** A contact as the address book serves it: a vCard 3.0 and the strong entity tag of its bytes. */
export interface Card {
  contactId: string;
  path: string;
  body: string;
  etag: string;
  updatedAt: string;
}

/** The card of one of the owner's contacts. The ETag is a hash of the bytes, so it changes exactly when they do. */
export function cardOf(ownerId: string, contact: Contact): Card {
  const body = vcardCard(contact, '3.0');
  return { contactId: contact.id, path: cardPath(ownerId, contact.id), body, etag: contentEtag(body), updatedAt: contact.updated_at };
}

/** The card of a contact's API JSON, as the store keeps it and the listing and change feed read it. */
export function cardOfJson(ownerId: string, json: string): Card {
  return cardOf(ownerId, JSON.parse(json) as Contact);
}

/**
 * The owner's listing in list order, a page at a time, from `first` (already read, so that the answer's status and its
 * sync position are known before any byte of it is sent) to the end.
 */
export function listingPages(contacts: ChangeLogReader, ownerId: string, first: ListedRead): AsyncGenerator<ListedRead> {
  return listingBatches(contacts, ownerId, first, LISTING_PAGE_SIZE);
}

/** The first page of the owner's listing, with the change log's state in the same snapshot. */
export function firstListingPage(contacts: ChangeLogReader, ownerId: string): Promise<ListedRead> {
  return readListedAfter(contacts, ownerId, null, LISTING_PAGE_SIZE);
}
