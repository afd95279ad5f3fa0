import type { ExportFormat } from './format.js';

/** One contact per line, exactly as the API returns it; `contacts import` reads `.ndjson` and `.jsonl`. */
export const ndjsonFormat: ExportFormat = {
  start: '',
  contact: (contact) => `${JSON.stringify(contact)}\n`,
  end: () => '',
};

/** One JSON array of the contacts as the API returns them, a contact per line. */
export const jsonFormat: ExportFormat = {
  start: '[',
  contact: (contact, index) => `${index === 0 ? '\n' : ',\n'}${JSON.stringify(contact)}`,
  end: (count) => (count === 0 ? ']\n' : '\n]\n'),
};
