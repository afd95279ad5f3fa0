import { readFile } from 'node:fs/promises';
import { extname } from 'node:path';
import { assertUniqueIds, isEmptyContactInput, normalizeContactInput, type ValidContactInput } from '../domain/contact-input.js';
import { InputError } from '../domain/errors.js';
import type { ImportRecord } from '../store/store.js';
import { parseCsvRecords } from './formats/csv.js';
import { parseJsonRecords } from './formats/json.js';
import { parseNdjsonRecords } from './formats/ndjson.js';
import type { RawRecord } from './formats/raw-record.js';
import { parseVcardRecords } from './formats/vcard.js';
import { orList } from './or-list.js';

const FORMATS = new Map<string, (text: string) => RawRecord[]>([
  ['.json', parseJsonRecords],
  ['.ndjson', parseNdjsonRecords],
  ['.jsonl', parseNdjsonRecords],
  ['.csv', parseCsvRecords],
  ['.vcf', parseVcardRecords],
  ['.vcard', parseVcardRecords],
]);

/** The extensions an import accepts, as `--help`, docs/cli.md and the error for any other file name them. */
export const IMPORT_EXTENSIONS_TEXT = orList([...FORMATS.keys()]);

const READ_PROBLEMS: Record<string, string> = {
  ENOENT: 'no such file',
  EISDIR: 'it is a directory',
  EACCES: 'permission denied',
};

export interface ContactsFile {
  records: ImportRecord[];
  /** Where the records are that name no contact (an empty row, `{}`): skipped. */
  skippedEmpty: string[];
  /** What the file carries that no contact field holds (vCard: `PHOTO`), with how many records carry it. */
  notImported: { what: string; records: number }[];
}

/**
 * Reads a contacts file (format chosen by extension, IMPORT_EXTENSIONS_TEXT) into
 * validated import records labelled with where each is in the file. Throws InputError naming the place
 * of the first problem; nothing is imported from a file with one.
 */
export async function readContactsFile(path: string): Promise<ContactsFile> {
  const parse = FORMATS.get(extname(path).toLowerCase());
  if (parse === undefined) {
    throw new InputError(`cannot import ${path}: the file type must be ${IMPORT_EXTENSIONS_TEXT}`);
  }
  const raw = parse(await readText(path));
  const read = raw.map(({ label, fields }) => ({ label, contact: normalize(label, fields) }));
  const records = read.filter(({ contact }) => !isEmptyContactInput(contact));
  assertUniqueIds(records);
  return {
    records,
    skippedEmpty: read.filter(({ contact }) => isEmptyContactInput(contact)).map(({ label }) => label),
    notImported: tally(raw.flatMap((record) => record.notImported ?? [])),
  };
}

/** How often each thing occurs, most frequent first, then in order of first appearance. */
function tally(things: readonly string[]): { what: string; records: number }[] {
  const counts = new Map<string, number>();
  for (const what of things) counts.set(what, (counts.get(what) ?? 0) + 1);
  return [...counts].map(([what, records]) => ({ what, records })).sort((a, b) => b.records - a.records);
}

async function readText(path: string): Promise<string> {
  let bytes: Buffer;
  try {
    bytes = await readFile(path);
  } catch (error) {
    const { code, message } = error as NodeJS.ErrnoException;
    throw new InputError(`cannot read ${path}: ${READ_PROBLEMS[code ?? ''] ?? message}`);
  }
  try {
    // The decoder also drops a leading byte order mark.
    return new TextDecoder('utf-8', { fatal: true }).decode(bytes);
  } catch {
    throw new InputError(`cannot read ${path}: it is not UTF-8 text`);
  }
}

function normalize(label: string, fields: Record<string, unknown>): ValidContactInput {
  try {
    return normalizeContactInput(fields);
  } catch (error) {
    if (error instanceof InputError) throw new InputError(`${label}: ${error.message}`);
    throw error;
  }
}
