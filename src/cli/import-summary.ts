import type { ImportSummary } from '../operations/contacts.js';
import { oneOrMany, plural } from './io.js';

/** How many places a summary names in words. */
const LISTED_IN_WORDS = 5;

/**
 * `Imported 3 contacts: 3 created, 0 updated, 0 unchanged`, then what became of records without an id, the empty
 * records skipped, the emails another contact already has, and what the file held that contacts have no place for.
 */
export function importSummaryText(summary: ImportSummary): string {
  const { imported, created, updated, unchanged, merged, without_id, skipped_empty, duplicate_emails } = summary;
  const { matched_by_email, matched_by_linkedin_url } = summary;
  const parts = [`${created} created`, `${updated} updated`, `${unchanged} unchanged`];
  if (merged > 0) parts.push(`${merged} merged`);
  if (matched_by_email > 0) parts.push(`${matched_by_email} matched by email`);
  if (matched_by_linkedin_url > 0) parts.push(`${matched_by_linkedin_url} matched by LinkedIn URL`);
  const lines = [`Imported ${plural(imported, 'contact')}: ${parts.join(', ')}`];
  const matched = matched_by_email + matched_by_linkedin_url;
  const unmatched = without_id - matched;
  if (unmatched > 0) {
    lines.push(
      `${plural(unmatched, 'record')} without an id became ${oneOrMany(unmatched, 'a new contact', 'new contacts')}` +
        (matched === 0 ? '; --match email,linkedin_url updates the contact with the same email or LinkedIn URL instead' : ''),
    );
  }
  if (skipped_empty.count > 0) {
    lines.push(
      `Skipped ${plural(skipped_empty.count, 'empty record')} (no contact field): ${places(skipped_empty.count, skipped_empty.records)}`,
    );
  }
  if (duplicate_emails.count > 0) {
    const records = duplicate_emails.records.map(({ record, email, same_as }) => `${record}: ${email}, as ${same_as}`);
    lines.push(
      `${plural(duplicate_emails.count, 'record')} with an email another contact already has: ${places(duplicate_emails.count, records)}`,
    );
  }
  if (summary.not_imported.length > 0) {
    lines.push('Not imported, as a contact has no place for them:');
    lines.push(...summary.not_imported.map(({ what, records }) => `  ${what}: on ${plural(records, 'record')}`));
  }
  return lines.join('\n');
}

/** The first few places, and how many more there are. */
function places(count: number, listed: readonly string[]): string {
  const shown = listed.slice(0, LISTED_IN_WORDS);
  return count > shown.length ? `${shown.join('; ')} and ${count - shown.length} more` : shown.join('; ');
}
