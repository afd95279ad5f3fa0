import type { ExportFormat } from './format.js';
import { vcardCard } from './vcard-card.js';

export { fold } from './vcard-card.js';

/**
 * vCard 4.0 (RFC 6350), one card per contact, which `contacts import` and address books (Apple, Google) read: the
 * mapping of vcard-card.ts, with UID as urn:uuid:<id>, TEL as a tel: URI when the phone is a plain number, and REV
 * (updated_at) in ISO 8601 basic format with its milliseconds: `20240501T093000.123Z`.
 *
 * vCard has no place for school, source, enrichment, enriched_at, research_data, researched_at or created_at:
 * those are lost (use csv, json or ndjson to keep every field). Importing the file over the same contacts changes
 * nothing; into an empty network, it gives each contact created_at = updated_at.
 */
export const vcardFormat: ExportFormat = {
  start: '',
  contact: (contact) => vcardCard(contact, '4.0'),
  end: () => '',
};
