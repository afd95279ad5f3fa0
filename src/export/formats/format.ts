import type { Contact } from 'contacts-read-api-client';

/** How contacts are written as text, one contact at a time, so an export of any size streams. */
export interface ExportFormat {
  /** Text before the first contact. */
  start: string;
  /** The text of one contact; `index` counts from 0. */
  contact(contact: Contact, index: number): string;
  /** Text after the last contact, given how many were written. */
  end(count: number): string;
}
