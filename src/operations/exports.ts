import type { Contact } from 'contacts-read-api-client';
import { writeFileAtomically } from '../export/atomic-file.js';
import { writeContacts } from '../export/export-contacts.js';
import { EXPORT_FORMATS, type ExportFormatName } from '../export/export-format.js';

/** Where an export goes: a file, which appears complete or not at all, or text handed to `write` as it is made. */
export type ExportTarget = { file: string } | { write: (text: string) => Promise<void> | void };

/**
 * Writes every contact of `contacts`, in their order, in `format` to `target`, calling `onContact` with the running
 * count; returns how many were written. When the walk fails or is stopped, a target file is not written (whatever was
 * at its path stays) and the failure is thrown.
 */
export async function exportContacts(
  contacts: AsyncIterable<Contact>,
  format: ExportFormatName,
  target: ExportTarget,
  onContact?: (count: number) => void,
): Promise<number> {
  const write = (to: (text: string) => Promise<void> | void) => writeContacts(contacts, EXPORT_FORMATS[format], to, onContact);
  return 'file' in target ? writeFileAtomically(target.file, write) : write(target.write);
}
