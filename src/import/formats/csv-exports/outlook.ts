import type { CsvExportFormat } from './csv-export-format.js';

const NO_DATE = ['0/0/00'];

/**
 * Outlook's CSV export (classic Outlook's "Comma Separated Values", and Outlook.com People → Export contacts):
 * `Title` (Mr., Dr.), `First Name`, `Middle Name`, `Last Name`, `Suffix`, `Company`, `Department`, `Job Title`,
 * addresses (`Business City`, `Home City`, …), phones (`Business Phone`, `Mobile Phone`, …), `Birthday`,
 * `Categories` (`;`-separated), `E-mail Address`, `E-mail 2 Address`, …, `Notes`, `Web Page`. Classic Outlook
 * writes `0/0/00` for no date and its defaults (`Normal`, `False`, `Unspecified`) in columns no one filled.
 */
export const OUTLOOK_CONTACTS: CsvExportFormat = {
  name: 'Outlook CSV',
  origin: { source: 'outlook', matchOn: [] },
  signature: ['First Name', 'Last Name', 'E-mail Address', 'Job Title'],
  fields: {
    name: [{ join: ['Title', 'First Name', 'Middle Name', 'Last Name', 'Suffix'], with: ' ' }, { first: ['Nickname'] }],
    email: [{ first: ['E-mail Address', 'E-mail 2 Address', 'E-mail 3 Address'] }],
    phone: [
      {
        first: [
          'Primary Phone',
          'Mobile Phone',
          'Business Phone',
          'Home Phone',
          'Business Phone 2',
          'Home Phone 2',
          'Other Phone',
          'Company Main Phone',
        ],
      },
    ],
    company: [{ first: ['Company'] }],
    title: [{ first: ['Job Title'] }],
    school: [{ first: ['Schools'] }],
    location: [
      { first: ['Location'] },
      { join: ['Business City', 'Business State', 'Business Country/Region'], with: ', ' },
      { join: ['Home City', 'Home State', 'Home Country/Region'], with: ', ' },
    ],
    birthday: [{ first: ['Birthday'] }],
    description: [{ first: ['Notes'] }],
    tags: [{ tags: 'Categories', at: ';' }],
    linkedin_url: [{ first: ['Web Page', 'Personal Web Page'], only: /linkedin\.com/i, leftover: 'a contact keeps a LinkedIn URL only' }],
  },
  describing: [/^E-mail (\d )?(Type|Display Name)$/],
  none: {
    Birthday: NO_DATE,
    Anniversary: NO_DATE,
    Gender: ['Unspecified'],
    Priority: ['Normal'],
    Sensitivity: ['Normal'],
    Private: ['False'],
  },
};
