import { CsvError, type Info, type Options } from 'csv-parse';
import { parse } from 'csv-parse/stream';
import { IMPORTABLE_FIELDS } from '../../domain/contact.js';
import { InputError } from '../../domain/errors.js';
import { withLfBreaks, type TextChunks } from '../text-chunks.js';
import { csvExportReader } from './csv-exports/csv-export-reader.js';
import type { CsvExportFormat } from './csv-exports/csv-export-format.js';
import { GOOGLE_CONTACTS, GOOGLE_CONTACTS_LEGACY } from './csv-exports/google.js';
import { LINKEDIN_CONNECTIONS } from './csv-exports/linkedin.js';
import { OUTLOOK_CONTACTS } from './csv-exports/outlook.js';
import { orList } from '../or-list.js';
import type { RawRecord } from './raw-record.js';

const JSON_COLUMNS: readonly string[] = ['enrichment', 'research_data'];
/** The most text handed to csv-parse at once, as a file is read. */
const PARSED_CHUNK = 64 * 1024;
/** The exports of other products read as they are, each recognised by its header row. */
export const CSV_EXPORT_FORMATS: readonly CsvExportFormat[] = [
  LINKEDIN_CONNECTIONS,
  GOOGLE_CONTACTS,
  GOOGLE_CONTACTS_LEGACY,
  OUTLOOK_CONTACTS,
];

interface Row {
  line: number;
  cells: string[];
}

/** What csv-parse gives with `info: true`. */
interface ParsedRecord {
  record: string[];
  info: Info;
}

type RowReader = (cells: readonly string[], label: string) => RawRecord;

interface Header {
  columns: number;
  readRow: RowReader;
}

/**
 * CSV, `,`- or `;`-separated, each row labelled `line N` (where the row starts), read row by row. The header row
 * names contact fields, or is the header of an export in CSV_EXPORT_FORMATS (LinkedIn's may follow lines of notes).
 * With field names: empty cells give null; `tags` is `;`-separated, or a JSON array of strings when it starts with
 * `[`; `enrichment` and `research_data` hold JSON objects. A row whose every cell is blank gives a record of no fields.
 */
export async function* readCsvRecords(text: TextChunks): AsyncGenerator<RawRecord> {
  let header: Header | null = null;
  let first: Row | undefined;
  for await (const row of parseRows(withLfBreaks(text))) {
    if (header === null) {
      first ??= row;
      header = readHeader(row, row === first);
      continue;
    }
    const { line, cells } = row;
    const label = `line ${line}`;
    if (cells.every(isBlank)) {
      yield { label, fields: {} };
      continue;
    }
    if (cells.length !== header.columns) {
      throw new InputError(`${label}: expected ${header.columns} cells as in the header, found ${cells.length}`);
    }
    yield header.readRow(cells, label);
  }
  if (header === null && first !== undefined) throw unknownColumn(first);
}

/**
 * Finds the delimiter as the text begins (`;` when the first line with a delimiter outside quotes has more semicolons
 * than commas: spreadsheets in locales whose decimal mark is a comma write those, else `,`), then reads the rows, with
 * the line each starts on; a line holding nothing but spaces is no row.
 */
async function* parseRows(text: AsyncGenerator<string>): AsyncGenerator<Row> {
  const sniffer = new DelimiterSniffer();
  const held: string[] = [];
  for (let next = await text.next(); !next.done; next = await text.next()) {
    held.push(next.value);
    if (sniffer.decides(next.value)) break;
  }
  const openRow = new OpenRowStart();
  async function* observed(): AsyncGenerator<Buffer> {
    for await (const chunk of resumed(held, text)) {
      openRow.observe(chunk);
      // Every row of a chunk is queued at once, and the stream's queue slows down past a few thousand rows.
      for (let at = 0; at < chunk.length; at += PARSED_CHUNK) yield Buffer.from(chunk.slice(at, at + PARSED_CHUNK));
    }
  }
  const options: Options = {
    delimiter: sniffer.delimiter(),
    relax_column_count: true,
    // Spaces around delimiters, as in `Ada, "Lovelace, Ada"`, are not part of the cells.
    trim: true,
    skip_empty_lines: true,
    // Each record with where it ends (info.lines).
    info: true,
  };
  try {
    for await (const { record, info } of ReadableStream.from(observed()).pipeThrough<ParsedRecord>(parse(options))) {
      if (record.length === 1 && isBlank(record[0]!)) continue;
      // Its quoted line breaks say how far back from its end a record starts.
      yield { line: info.lines - record.reduce((count, cell) => count + (cell.split('\n').length - 1), 0), cells: record };
    }
  } catch (error) {
    if (!(error instanceof CsvError)) throw error;
    if (error.code === 'CSV_QUOTE_NOT_CLOSED') throw new InputError(`line ${openRow.line}: a quoted cell is never closed`);
    throw new InputError(`line ${String(error.lines)}: ${csvProblem(error)}`);
  }
}

async function* resumed(held: readonly string[], rest: AsyncGenerator<string>): AsyncGenerator<string> {
  yield* held;
  yield* rest;
}

/** Counts the delimiters outside quotes until the end of the first line that has any. */
class DelimiterSniffer {
  private quoted = false;
  private commas = 0;
  private semicolons = 0;

  /** Reads the next chunk; true once the delimiter is known. */
  decides(chunk: string): boolean {
    for (const char of chunk) {
      if (char === '"') this.quoted = !this.quoted;
      else if (this.quoted) continue;
      else if (char === ',') this.commas++;
      else if (char === ';') this.semicolons++;
      else if (char === '\n' && this.commas + this.semicolons > 0) return true;
    }
    return false;
  }

  delimiter(): ',' | ';' {
    return this.semicolons > this.commas ? ';' : ',';
  }
}

/**
 * Where the row still open at the end of the text starts: the last line that begins outside quotes and is not empty.
 * csv-parse names only the line where the text ends.
 */
class OpenRowStart {
  line = 0;
  private quoted = false;
  private current = 1;
  private atLineStart = true;

  observe(chunk: string): void {
    for (const char of chunk) {
      if (this.atLineStart && char !== '\n' && !this.quoted) this.line = this.current;
      this.atLineStart = char === '\n';
      if (char === '"') this.quoted = !this.quoted;
      else if (char === '\n') this.current++;
    }
  }
}

function csvProblem(error: CsvError): string {
  switch (error.code) {
    case 'INVALID_OPENING_QUOTE':
      return 'a quote inside an unquoted cell; quote the whole cell and double the quotes in it ("")';
    case 'CSV_INVALID_CLOSING_QUOTE':
      return 'text after a closing quote; double the quotes inside a quoted cell ("")';
    default:
      return error.message;
  }
}

/**
 * The header, if this row is one: the first row when it names contact fields or is an export's header; a later row
 * only for an export that has notes before its header.
 */
function readHeader({ line, cells }: Row, first: boolean): Header | null {
  if (first && cells.every(isField)) return { columns: cells.length, readRow: fieldReader({ line, cells }) };
  const format = CSV_EXPORT_FORMATS.find(
    ({ signature, notesBeforeHeader }) => (first || notesBeforeHeader === true) && signature.every((column) => cells.includes(column)),
  );
  return format === undefined ? null : { columns: cells.length, readRow: csvExportReader(format, cells) };
}

/** No row is a header: the first row's unknown column is refused, with what is accepted. */
function unknownColumn({ line, cells }: Row): InputError {
  return new InputError(
    `line ${line}: unknown column "${cells.find((cell) => !isField(cell))!}"; a header row names contact fields ` +
      `(${IMPORTABLE_FIELDS.join(', ')}) or is the header of a ${orList(CSV_EXPORT_FORMATS.map(({ name }) => name))} export`,
  );
}

/** Rows under a header of contact field names. */
function fieldReader({ line, cells: columns }: Row): RowReader {
  columns.forEach((column, i) => {
    if (columns.indexOf(column) !== i) throw new InputError(`line ${line}: duplicate column "${column}"`);
  });
  return (cells, label) => ({
    label,
    fields: Object.fromEntries(columns.map((column, i) => [column, cellValue(column, cells[i]!, label)])),
  });
}

const isField = (column: string): boolean => (IMPORTABLE_FIELDS as readonly string[]).includes(column);
const isBlank = (cell: string): boolean => cell.trim() === '';

function cellValue(column: string, cell: string, label: string): unknown {
  if (isBlank(cell)) return null;
  if (column === 'tags') {
    if (cell.trimStart().startsWith('[')) return jsonCell(column, cell, label);
    return cell
      .split(';')
      .map((tag) => tag.trim())
      .filter((tag) => tag !== '');
  }
  return JSON_COLUMNS.includes(column) ? jsonCell(column, cell, label) : cell;
}

function jsonCell(column: string, cell: string, label: string): unknown {
  try {
    return JSON.parse(cell) as unknown;
  } catch (error) {
    throw new InputError(`${label}: column "${column}" is not valid JSON (${(error as Error).message})`);
  }
}
