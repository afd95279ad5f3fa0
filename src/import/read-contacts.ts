import { createReadStream } from 'node:fs';
import { extname } from 'node:path';
import { isEmptyContactInput, normalizeContactInput, type ValidContactInput } from '../domain/contact-input.js';
import { InputError, PublicError } from '../domain/errors.js';
import { IMPORT_LISTED } from '../domain/import-matching.js';
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

/** How many records an import holds at once: it reads a batch, writes it, then reads the next. */
export const IMPORT_BATCH = 1000;

/**
 * Kinds of data not imported that a read counts, the first ones met: a vCard may name any property, and the count of
 * kinds must not grow with the text.
 */
const NOT_IMPORTED_KINDS = 1000;

/** What reading a text found, whole once its batches have been read to the end. */
export interface ReadTally {
  /** The records read (those skipped as empty not included). */
  records: number;
  /** Of them, those without an id. */
  withoutId: number;
  /** The records that name no contact (an empty row, `{}`), skipped: the first IMPORT_LISTED of their places. */
  skippedEmpty: { count: number; records: string[] };
  /** What the text carries that no contact field holds (vCard: `PHOTO`), with how many records carry it. */
  notImported(): { what: string; records: number }[];
}

/** A contacts text as it is read: its records in batches, each read when the import asks for it, once. */
export interface ContactsFile {
  batches: AsyncIterable<ImportRecord[]>;
  tally: ReadTally;
}

/**
 * Reads a contacts file (format chosen by extension, IMPORT_EXTENSIONS_TEXT) as readContacts does; InputError
 * `cannot read <path>: …` when the file cannot be read.
 */
export function readContactsFile(path: string): ContactsFile {
  const format = IMPORT_FORMATS.find(({ extensions }) => extensions.includes(extname(path).toLowerCase()));
  if (format === undefined) {
    throw new InputError(`cannot import ${path}: the file type must be ${IMPORT_EXTENSIONS_TEXT}`);
  }
  return readContacts(readFileBytes(path), format, path);
}

/**
 * Reads UTF-8 contacts in the format, chunk by chunk, into validated import records labelled with where each is in the
 * text, IMPORT_BATCH at a time, as the batches are asked for. Throws InputError naming the place of the first problem
 * (the source, `cannot read <source>: …`, when the bytes are not UTF-8), and a 413 past `maxRecords` records: an
 * import stops there, and imports nothing.
 */
export function readContacts(
  bytes: AsyncIterable<Uint8Array>,
  format: ImportFormat,
  source: string,
  { maxRecords = Infinity }: { maxRecords?: number } = {},
): ContactsFile {
  const notImported = new Map<string, number>();
  const tally: ReadTally = {
    records: 0,
    withoutId: 0,
    skippedEmpty: { count: 0, records: [] },
    notImported: () => mostFrequentFirst(notImported),
  };
  async function* batches(): AsyncGenerator<ImportRecord[]> {
    let batch: ImportRecord[] = [];
    for await (const raw of format.read(utf8Text(bytes, source))) {
      const contact = normalize(raw);
      if (isEmptyContactInput(contact)) {
        if (tally.skippedEmpty.count++ < IMPORT_LISTED) tally.skippedEmpty.records.push(raw.label);
      } else {
        if (++tally.records > maxRecords) throw new PublicError(413, tooManyRecords(source, maxRecords));
        if (contact.id === null) tally.withoutId++;
        batch.push(raw.origin === undefined ? { label: raw.label, contact } : { label: raw.label, contact, origin: raw.origin });
      }
      for (const what of raw.notImported ?? []) {
        const count = notImported.get(what);
        if (count !== undefined || notImported.size < NOT_IMPORTED_KINDS) notImported.set(what, (count ?? 0) + 1);
      }
      if (batch.length === IMPORT_BATCH) {
        yield batch;
        batch = [];
      }
    }
    if (batch.length > 0) yield batch;
  }
  return { batches: batches(), tally };
}

/** The 413 of a text with more records than an import takes. */
export function tooManyRecords(source: string, maxRecords: number): string {
  return `${source} has more than ${maxRecords} records, the most an import takes (ADMIN_IMPORT_MAX_RECORDS); nothing is imported`;
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
