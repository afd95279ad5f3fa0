import type { ServiceKeySource } from '../web/service-key.js';
import type { ChangeLogReader } from '../operations/change-feed.js';
import type { ContactReader } from '../operations/contacts.js';

/** What the address book's handlers read: the contacts, the key that signs sync tokens, and how long changes are kept. */
export interface CardDavDependencies {
  contacts: ContactReader & ChangeLogReader;
  serviceKey: ServiceKeySource;
  /** CHANGES_RETENTION_DAYS, in ms: a sync token older than this is refused (403 valid-sync-token). */
  retentionMs: number;
}
