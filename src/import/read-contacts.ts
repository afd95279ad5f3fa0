import { createReadStream } from 'node:fs';
import { extname } from 'node:path';
import { assertUniqueIds, isEmptyContactInput, normalizeContactInput, type ValidContactInput } from '../domain/contact-input.js';
import { InputError } from '../domain/errors.js';
import type { ImportRecord } from '../store/store.js';
import { readCsvRecords } from './formats/csv.js';
import { readJsonRecords } from './formats/json.js';
import { readNdjsonRecords } from './formats/ndjson.js';
import type { RawRecord } from './formats/raw-record.js';
import { readVcardRecords } from './formats/vcard.js';
import { orList } from './or-list.js';
import { utf8Text, type TextChunks } from './text-chunks.js';

/**
 * A format an import reads: how its files are named, the media types a request body in it may declare (the first is
 * the format's name; the others are the aliases tools send, registered or not), and its reader.
 */
export interface ImportFormat {
  extensions: readonly string[];
  mediaTypes: readonly [string, ...string[]];
  read: (text: TextChunks) => AsyncIterable<RawRecord>;
}

const IMPORT_FORMATS: readonly ImportFormat[] = [
  { extensions: ['.json'], mediaTypes: ['application/json'], read: readJsonRecords },
  {
    extensions: ['.ndjson', '.jsonl'],
    mediaTypes: [
      'application/x-ndjson',
      'application/ndjson',
      'application/jsonl',
      'application/x-jsonl',
      'application/jsonlines',
      'application/x-jsonlines',
    ],
    read: readNdjsonRecords,
  },
  {
    extensions: ['.csv'],
    mediaTypes: ['text/csv', 'application/csv', 'text/comma-separated-values', 'text/x-csv', 'application/x-csv'],
    read: readCsvRecords,
  },
  { extensions: ['.vcf', '.vcard'], mediaTypes: ['text/vcard', 'text/x-vcard', 'text/directory'], read: readVcardRecords },
];

/** The extensions an import accepts, as `--help`, docs/cli.md and the error for any other file name them. */
export const IMPORT_EXTENSIONS_TEXT = orList(IMPORT_FORMATS.flatMap(({ extensions }) => extensions));

/** The media types of the bodies an import accepts, each format's name first, then its aliases. */
export const IMPORT_MEDIA_TYPES: readonly string[] = IMPORT_FORMATS.flatMap(({ mediaTypes }) => mediaTypes);

/** The format a body of this media type (lower case, without parameters) is in, if an import reads it. */
export function importFormatOf(mediaType: string): ImportFormat | undefined {
  return IMPORT_FORMATS.find((format) => format.mediaTypes.includes(mediaType));
}

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
 * Reads a contacts file (format chosen by extension, IMPORT_EXTENSIONS_TEXT) as readContacts does; InputError
 * `cannot read <path>: …` when the file cannot be read.
 */
export async function readContactsFile(path: string): Promise<ContactsFile> {
  const format = IMPORT_FORMATS.find(({ extensions }) => extensions.includes(extname(path).toLowerCase()));
  if (format === undefined) {
    throw new InputError(`cannot import ${path}: the file type must be ${IMPORT_EXTENSIONS_TEXT}`);
  }
  return readContacts(readFileBytes(path), format, path);
}

/**
 * Reads UTF-8 contacts in the format, chunk by chunk, into validated import records labelled with where each is in the
 * text. Throws InputError naming the place of the first problem (the source, `cannot read <source>: …`, when the bytes
 * are not UTF-8); nothing is imported from a text with one.
 */
export async function readContacts(bytes: AsyncIterable<Uint8Array>, format: ImportFormat, source: string): Promise<ContactsFile> {
  const records: ImportRecord[] = [];
  const skippedEmpty: string[] = [];
  const notImported = new Map<string, number>();
  for await (const raw of format.read(utf8Text(bytes, source))) {
    const contact = normalize(raw);
    if (isEmptyContactInput(contact)) skippedEmpty.push(raw.label);
    else records.push(raw.origin === undefined ? { label: raw.label, contact } : { label: raw.label, contact, origin: raw.origin });
    for (const what of raw.notImported ?? []) notImported.set(what, (notImported.get(what) ?? 0) + 1);
  }
  assertUniqueIds(records);
  return { records, skippedEmpty, notImported: mostFrequentFirst(notImported) };
}

/** Each thing with how often it occurs, most frequent first, then in order of first appearance. */
function mostFrequentFirst(counts: ReadonlyMap<string, number>): { what: string; records: number }[] {
  return [...counts].map(([what, records]) => ({ what, records })).sort((a, b) => b.records - a.records);
}

/** The file's bytes as they are read; InputError `cannot read <path>: …` when it cannot be. */
export async function* readFileBytes(path: string): AsyncGenerator<Buffer> {
  try {
    for await (const chunk of createReadStream(path)) yield chunk as Buffer;
  } catch (error) {
    const { code, message } = error as NodeJS.ErrnoException;
    throw new InputError(`cannot read ${path}: ${READ_PROBLEMS[code ?? ''] ?? message}`);
  }
}

function normalize({ label, fields }: RawRecord): ValidContactInput {
  try {
    return normalizeContactInput(fields);
  } catch (error) {
    if (error instanceof InputError) throw new InputError(`${label}: ${error.message}`);
    throw error;
  }
}
