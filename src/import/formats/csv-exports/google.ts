import type { RecordOrigin } from '../../../domain/import-matching.js';
import type { CsvExportFormat, FieldSource } from './csv-export-format.js';

const LINKEDIN_URL = /linkedin\.com/i;
const NOT_LINKEDIN = 'a contact keeps a LinkedIn URL only';
const GOOGLE: RecordOrigin = { source: 'google', matchOn: [] };
/** Every contact is in the system group `* myContacts`: not a tag. */
const SYSTEM_GROUPS = ['* myContacts'];

const addressPlace = (address: string): FieldSource => ({
  join: [`${address} - City`, `${address} - Region`, `${address} - Country`],
  with: ', ',
});

/**
 * Google Contacts' CSV export ("Google CSV", contacts.google.com → Export) since 2024: `First Name`, `Middle Name`,
 * `Last Name`, …, `Organization Name`, `Organization Title`, `Birthday`, `Notes`, `Labels`, then numbered groups
 * (`E-mail 1 - Label`, `E-mail 1 - Value`, `Phone 1 - …`, `Address 1 - …`, `Website 1 - …`). A cell of several
 * values of one label joins them with ` ::: `.
 */
export const GOOGLE_CONTACTS: CsvExportFormat = {
  name: 'Google Contacts CSV',
  origin: GOOGLE,
  signature: ['First Name', 'Middle Name', 'Last Name', 'Labels'],
  valueSeparator: ' ::: ',
  fields: {
    name: [{ join: ['Name Prefix', 'First Name', 'Middle Name', 'Last Name', 'Name Suffix'], with: ' ' }, { first: ['Nickname'] }],
    email: [{ first: [/^E-mail \d+ - Value$/] }],
    phone: [{ first: [/^Phone \d+ - Value$/] }],
    company: [{ first: ['Organization Name'] }],
    title: [{ first: ['Organization Title'] }],
    location: [addressPlace('Address 1')],
    birthday: [{ first: ['Birthday'] }],
    description: [{ first: ['Notes'] }],
    tags: [{ tags: 'Labels', at: ' ::: ', except: SYSTEM_GROUPS }],
    linkedin_url: [{ first: [/^Website \d+ - Value$/], only: LINKEDIN_URL, leftover: NOT_LINKEDIN }],
  },
  // `File As` and an address's `Formatted` text repeat what other columns hold.
  describing: [/ - (Label|Type)$/, 'File As', / - Formatted$/],
};

/**
 * The older Google CSV (and Gmail's "Google CSV" before 2024): `Name`, `Given Name`, `Additional Name`,
 * `Family Name`, …, `Birthday`, `Notes`, `Group Membership`, then `E-mail 1 - Type`, `E-mail 1 - Value`,
 * `Phone 1 - …`, `Address 1 - …`, `Organization 1 - Name`, `Organization 1 - Title`, `Website 1 - …`.
 */
export const GOOGLE_CONTACTS_LEGACY: CsvExportFormat = {
  name: 'Google Contacts CSV (before 2024)',
  origin: GOOGLE,
  signature: ['Name', 'Given Name', 'Family Name', 'Group Membership'],
  valueSeparator: ' ::: ',
  fields: {
    name: [
      { first: ['Name'] },
      { join: ['Name Prefix', 'Given Name', 'Additional Name', 'Family Name', 'Name Suffix'], with: ' ' },
      { first: ['Nickname'] },
    ],
    email: [{ first: [/^E-mail \d+ - Value$/] }],
    phone: [{ first: [/^Phone \d+ - Value$/] }],
    company: [{ first: [/^Organization \d+ - Name$/] }],
    title: [{ first: [/^Organization \d+ - Title$/] }],
    location: [addressPlace('Address 1'), { first: ['Location'] }],
    birthday: [{ first: ['Birthday'] }],
    description: [{ first: ['Notes'] }],
    tags: [{ tags: 'Group Membership', at: ' ::: ', except: SYSTEM_GROUPS }],
    linkedin_url: [{ first: [/^Website \d+ - Value$/], only: LINKEDIN_URL, leftover: NOT_LINKEDIN }],
  },
  describing: [/ - (Label|Type)$/, 'File As', / - Formatted$/],
};
