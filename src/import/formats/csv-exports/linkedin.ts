import type { CsvExportFormat } from './csv-export-format.js';

/**
 * LinkedIn's Connections.csv (Settings → Data privacy → Get a copy of your data → Connections): a few lines of
 * notes, a blank line, then `First Name,Last Name,URL,Email Address,Company,Position,Connected On`. Email
 * Address is empty unless the connection allows it; older exports have no URL column.
 */
export const LINKEDIN_CONNECTIONS: CsvExportFormat = {
  name: 'LinkedIn Connections.csv',
  // Most connections hide their email: the profile URL is what finds a connection imported before.
  origin: { source: 'linkedin', matchOn: ['linkedin_url'] },
  signature: ['First Name', 'Last Name', 'Company', 'Position', 'Connected On'],
  notesBeforeHeader: true,
  fields: {
    name: [{ join: ['First Name', 'Last Name'], with: ' ' }],
    linkedin_url: [{ first: ['URL'] }],
    email: [{ first: ['Email Address'] }],
    company: [{ first: ['Company'] }],
    title: [{ first: ['Position'] }],
  },
};
