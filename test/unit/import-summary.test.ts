import { describe, expect, it } from 'vitest';
import { importSummaryText } from '../../src/cli/import-summary.js';
import { oneOrMany, plural } from '../../src/cli/io.js';
import type { ImportSummary } from '../../src/operations/contacts.js';

/** A summary of `count` records without an id, none of them matched, nothing else to say. */
function newContacts(count: number): ImportSummary {
  return {
    imported: count,
    created: count,
    updated: 0,
    unchanged: 0,
    merged: 0,
    without_id: count,
    matched_by_email: 0,
    matched_by_linkedin_url: 0,
    skipped_empty: { count: 0, records: [] },
    duplicate_emails: { count: 0, records: [] },
    not_imported: [],
  };
}

describe('words that agree with a number', () => {
  it('plural counts a noun, singular for one alone', () => {
    expect([0, 1, 2].map((count) => plural(count, 'record'))).toEqual(['0 records', '1 record', '2 records']);
  });

  it('oneOrMany picks the phrase for one or for any other count', () => {
    expect([0, 1, 2].map((count) => oneOrMany(count, 'a new contact', 'new contacts'))).toEqual([
      'new contacts',
      'a new contact',
      'new contacts',
    ]);
  });
});

describe('the import summary in words', () => {
  it('says one record became a new contact, and several became new contacts', () => {
    const hint = '; --match email,linkedin_url updates the contact with the same email or LinkedIn URL instead';
    expect(importSummaryText(newContacts(1))).toBe(
      `Imported 1 contact: 1 created, 0 updated, 0 unchanged\n1 record without an id became a new contact${hint}`,
    );
    expect(importSummaryText(newContacts(2))).toBe(
      `Imported 2 contacts: 2 created, 0 updated, 0 unchanged\n2 records without an id became new contacts${hint}`,
    );
  });

  it('agrees with one in every line: an empty record, a duplicate email, a field on one record', () => {
    const summary: ImportSummary = {
      ...newContacts(1),
      skipped_empty: { count: 1, records: ['line 3'] },
      duplicate_emails: { count: 1, records: [{ record: 'line 2', email: 'ada@example.com', same_as: 'line 1' }] },
      not_imported: [{ what: 'Connected On', records: 1 }],
    };
    expect(importSummaryText(summary).split('\n').slice(2)).toEqual([
      'Skipped 1 empty record (no contact field): line 3',
      '1 record with an email another contact already has: line 2: ada@example.com, as line 1',
      'Not imported, as a contact has no place for them:',
      '  Connected On: on 1 record',
    ]);
  });
});
