import { describe, expect, it } from 'vitest';
import { IMPORTABLE_FIELDS } from '../../src/domain/contact.js';
import { readCsvRecords } from '../../src/import/formats/csv.js';
import { readAll, readWholeFile } from '../support/read-records.js';

/** Files written from each product's documented export header (test/fixtures/import). */
const fixture = (name: string) => readWholeFile(`test/fixtures/import/${name}`);
/** A record of another product's export: the contacts it creates get the product as their source. */
const fromExport =
  (source: string, matchOn: string[] = []) =>
  (label: string, values: Record<string, unknown>) => ({ label, contact: { id: null, values }, origin: { source, matchOn } });
// A LinkedIn connection is matched on its profile URL unless the import says otherwise: most hide their email.
const linkedinRecord = fromExport('linkedin', ['linkedin_url']);
const googleRecord = fromExport('google');
const outlookRecord = fromExport('outlook');

const ADA = {
  name: 'Ada Lovelace',
  email: 'ada@example.com',
  phone: '+44 20 7946 0018',
  company: 'Analytical Engines',
  title: 'Programmer',
  linkedin_url: 'https://www.linkedin.com/in/ada-lovelace',
  location: 'London, United Kingdom',
};

describe('CSV exports of other products, read by their own headers', () => {
  it("reads LinkedIn's Connections.csv, with its notes before the header", async () => {
    expect(await fixture('linkedin-connections.csv')).toEqual({
      records: [
        linkedinRecord('line 5', {
          name: 'Ada Lovelace',
          email: 'ada@example.com',
          company: 'Analytical Engines',
          title: 'Programmer',
          linkedin_url: 'https://www.linkedin.com/in/ada-lovelace',
        }),
        linkedinRecord('line 6', {
          name: 'Grace Hopper',
          company: 'US Navy, Reserve',
          title: 'Rear Admiral',
          linkedin_url: 'https://www.linkedin.com/in/grace-hopper',
        }),
      ],
      skippedEmpty: [],
      notImported: [{ what: 'Connected On', records: 2 }],
    });
  });

  it("reads Google Contacts' CSV: first of several values, labels as tags, a row of no field skipped", async () => {
    expect(await fixture('google-contacts.csv')).toEqual({
      records: [
        googleRecord('line 2', {
          ...ADA,
          description: 'First programmer.\nWrote the "Notes".',
          birthday: '1815-12-10',
          tags: ['Friends', '* starred'],
        }),
        googleRecord('line 6', { name: 'Rear Admiral Grace Brewster Hopper', phone: '+1 202-555-0143' }),
        googleRecord('line 8', { name: 'Babbage', email: 'charles@engines.example', tags: ['Engines'] }),
      ],
      skippedEmpty: ['line 7'],
      notImported: [
        { what: 'Organization Department', records: 1 },
        { what: 'Photo', records: 1 },
        { what: 'E-mail 1 - Value (a contact keeps one email)', records: 1 },
        { what: 'E-mail 2 - Value (a contact keeps one email)', records: 1 },
        { what: 'Address 1 - Street', records: 1 },
        { what: 'Address 1 - Postal Code', records: 1 },
        { what: 'Website 1 - Value (a contact keeps a LinkedIn URL only)', records: 1 },
      ],
    });
  });

  it("reads Google Contacts' older CSV (Given Name, Family Name, Organization 1 - Name)", async () => {
    expect(await fixture('google-contacts-legacy.csv')).toEqual({
      records: [
        googleRecord('line 2', { ...ADA, description: 'First programmer.', birthday: '1815-12-10', tags: ['Friends'] }),
        googleRecord('line 3', { name: 'Grace Hopper', email: 'grace@navy.example' }),
      ],
      skippedEmpty: [],
      notImported: [{ what: 'Occupation', records: 1 }],
    });
  });

  const OUTLOOK = {
    records: [
      outlookRecord('line 2', { ...ADA, description: 'First programmer.', birthday: '12/10/1815', tags: ['Friends', 'Engines'] }),
      outlookRecord('line 3', { name: 'Dr. Grace Hopper', email: 'grace@navy.example', title: 'Rear Admiral', location: 'Arlington, VA' }),
    ],
    // Outlook's defaults (0/0/00, Normal, False, Unspecified) are no data: the third row is empty.
    skippedEmpty: ['line 4'],
    notImported: [
      { what: 'Department', records: 1 },
      { what: 'Business Phone (a contact keeps one phone)', records: 1 },
      { what: 'E-mail 2 Address (a contact keeps one email)', records: 1 },
      { what: 'Spouse', records: 1 },
    ],
  };

  it("reads Outlook's CSV", async () => {
    expect(await fixture('outlook-contacts.csv')).toEqual(OUTLOOK);
  });

  it('reads a ;-separated file the same way', async () => {
    expect(await fixture('outlook-contacts-semicolon.csv')).toEqual(OUTLOOK);
    expect(await readAll(readCsvRecords, 'name;email;tags\nAda;ada@example.com;"math;history"\n')).toEqual([
      { label: 'line 2', fields: { name: 'Ada', email: 'ada@example.com', tags: ['math', 'history'] } },
    ]);
  });

  it('refuses an unknown column, listing the accepted columns and exports', async () => {
    await expect(readAll(readCsvRecords, 'Name,email\nAda,ada@example.com\n')).rejects.toThrow(
      `line 1: unknown column "Name"; a header row names contact fields (${IMPORTABLE_FIELDS.join(', ')}) or is the header ` +
        'of a LinkedIn Connections.csv, Google Contacts CSV, Google Contacts CSV (before 2024) or Outlook CSV export',
    );
  });

  it('takes notes before the header from LinkedIn only', async () => {
    await expect(readAll(readCsvRecords, 'Notes:\nname,email\nAda,ada@example.com\n')).rejects.toThrow('line 1: unknown column "Notes:"');
  });
});
