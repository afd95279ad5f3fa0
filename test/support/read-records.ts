import { readContactsFile, type ContactsFile } from '../../src/import/read-contacts.js';
import type { ImportRecord } from '../../src/store/store.js';
import type { RawRecord } from '../../src/import/formats/raw-record.js';
import type { TextChunks } from '../../src/import/text-chunks.js';

/** Every record a format's reader gives for the text, whole or in the chunks given. */
export async function readAll(
  read: (text: TextChunks) => AsyncIterable<RawRecord>,
  text: string | readonly string[],
): Promise<RawRecord[]> {
  const records: RawRecord[] = [];
  for await (const record of read(typeof text === 'string' ? [text] : text)) records.push(record);
  return records;
}

/** A contacts file read to its end, as tests compare it: every record, and the first places of the empty ones. */
export interface WholeFile {
  records: ImportRecord[];
  skippedEmpty: string[];
  notImported: { what: string; records: number }[];
}

/** Reads every batch of the file. */
export async function readWhole({ batches, tally }: ContactsFile): Promise<WholeFile> {
  const records: ImportRecord[] = [];
  for await (const batch of batches) records.push(...batch);
  return { records, skippedEmpty: tally.skippedEmpty.records, notImported: tally.notImported() };
}

/** Reads the contacts file at `path` to its end, as readContactsFile reads it; its errors reject. */
export async function readWholeFile(path: string): Promise<WholeFile> {
  return readWhole(readContactsFile(path));
}
