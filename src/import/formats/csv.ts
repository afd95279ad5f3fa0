import { CsvError, parse } from 'csv-parse/sync';
import { IMPORTABLE_FIELDS } from '../../domain/contact.js';
import { InputError } from '../../domain/errors.js';
import { csvExportReader } from './csv-exports/csv-export-reader.js';
import type { CsvExportFormat } from './csv-exports/csv-export-format.js';
import { GOOGLE_CONTACTS, GOOGLE_CONTACTS_LEGACY } from './csv-exports/google.js';
import { LINKEDIN_CONNECTIONS } from './csv-exports/linkedin.js';
import { OUTLOOK_CONTACTS } from './csv-exports/outlook.js';
import { orList } from '../or-list.js';
import type { RawRecord } from './raw-record.js';

const JSON_COLUMNS: readonly string[] = ['enrichment', 'research_data'];
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

type RowReader = (cells: readonly string[], label: string) => RawRecord;

/**
 * CSV, `,`- or `;`-separated, each row labelled `line N` (where the row starts). The header row names contact
 * fields, or is the header of an export in CSV_EXPORT_FORMATS (LinkedIn's may follow lines of notes). With field
 * names: empty cells give null; `tags` is `;`-separated, or a JSON array of strings when it starts with `[`;
 * `enrichment` and `research_data` hold JSON objects. A row whose every cell is blank gives a record of no fields.
 */
export function parseCsvRecords(text: string): RawRecord[] {
  const rows = parseRows(text, sniffDelimiter(text));
  if (rows.length === 0) return [];
  const { at, columns, readRow } = readHeader(rows);
  return rows.slice(at + 1).map(({ line, cells }) => {
    const label = `line ${line}`;
    if (cells.every(isBlank)) return { label, fields: {} };
    if (cells.length !== columns) {
      throw new InputError(`${label}: expected ${columns} cells as in the header, found ${cells.length}`);
    }
    return readRow(cells, label);
  });
}

/**
 * `;` when the first line with a delimiter outside quotes has more semicolons than commas (spreadsheets in
 * locales whose decimal mark is a comma write those), else `,`.
 */
function sniffDelimiter(text: string): ',' | ';' {
  let quoted = false;
  let commas = 0;
  let semicolons = 0;
  for (let i = 0; i < text.length; i++) {
    const char = text[i];
    if (char === '"') quoted = !quoted;
    else if (quoted) continue;
    else if (char === ',') commas++;
    else if (char === ';') semicolons++;
    else if (char === '\n' && commas + semicolons > 0) break;
  }
  return semicolons > commas ? ';' : ',';
}

/** The rows, with the line each starts on; a line holding nothing but spaces is no row. */
function parseRows(text: string, delimiter: string): Row[] {
  // csv-parse counts a CRLF inside a quoted field as two lines; one kind of line break keeps its count right.
  const normalized = text.replace(/\r\n?/g, '\n');
  const lines: number[] = [];
  let lastRecordEnd = 0;
  try {
    const records = parse(normalized, {
      delimiter,
      relax_column_count: true,
      // Spaces around delimiters, as in `Ada, "Lovelace, Ada"`, are not part of the cells.
      trim: true,
      skip_empty_lines: true,
      on_record: (record: string[], context) => {
        lastRecordEnd = context.lines;
        if (record.length === 1 && isBlank(record[0]!)) return null;
        // context.lines is where the record ends; its quoted line breaks say how far back it starts.
        lines.push(context.lines - record.reduce((count, cell) => count + (cell.split('\n').length - 1), 0));
        return record;
      },
    });
    return records.map((cells, i) => ({ line: lines[i]!, cells }));
  } catch (error) {
    if (!(error instanceof CsvError)) throw error;
    if (error.code === 'CSV_QUOTE_NOT_CLOSED') {
      const start = normalized.split('\n').findIndex((line, i) => i >= lastRecordEnd && line !== '') + 1;
      throw new InputError(`line ${start}: a quoted cell is never closed`);
    }
    throw new InputError(`line ${String(error.lines)}: ${csvProblem(error)}`);
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
 * The header row: the first row when it names contact fields or is an export's header; a later row only for an
 * export that has notes before its header. Otherwise the first row's unknown column is refused, with what is accepted.
 */
function readHeader(rows: readonly Row[]): { at: number; columns: number; readRow: RowReader } {
  for (const [at, { cells }] of rows.entries()) {
    if (at === 0 && cells.every(isField)) return { at, columns: cells.length, readRow: fieldReader(rows[0]!) };
    const format = CSV_EXPORT_FORMATS.find(
      ({ signature, notesBeforeHeader }) => (at === 0 || notesBeforeHeader === true) && signature.every((column) => cells.includes(column)),
    );
    if (format !== undefined) return { at, columns: cells.length, readRow: csvExportReader(format, cells) };
  }
  const { line, cells } = rows[0]!;
  throw new InputError(
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
