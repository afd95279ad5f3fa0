import { CsvError, parse } from 'csv-parse/sync';
import { IMPORTABLE_FIELDS } from '../../domain/contact.js';
import { InputError } from '../../domain/errors.js';
import type { RawRecord } from './raw-record.js';

const JSON_COLUMNS: readonly string[] = ['enrichment', 'research_data'];

interface Row {
  line: number;
  cells: string[];
}

/**
 * CSV with a header row of contact field names, each row labelled `line N` (where the row starts).
 * Empty cells give null; `tags` is `;`-separated, or a JSON array of strings when it starts with `[`;
 * `enrichment` and `research_data` hold JSON objects.
 */
export function parseCsvRecords(text: string): RawRecord[] {
  const [header, ...rows] = parseRows(text);
  if (header === undefined) return [];
  const columns = readHeader(header);
  return rows.map(({ line, cells }) => {
    const label = `line ${line}`;
    if (cells.length !== columns.length) {
      throw new InputError(`${label}: expected ${columns.length} cells as in the header, found ${cells.length}`);
    }
    const fields = Object.fromEntries(columns.map((column, i) => [column, cellValue(column, cells[i]!, label)]));
    return { label, fields };
  });
}

/** Rows that have a non-blank cell, with the line each starts on. */
function parseRows(text: string): Row[] {
  // csv-parse counts a CRLF inside a quoted field as two lines; one kind of line break keeps its count right.
  const normalized = text.replace(/\r\n?/g, '\n');
  const lines: number[] = [];
  let lastRecordEnd = 0;
  try {
    const records = parse(normalized, {
      relax_column_count: true,
      // Spaces around delimiters, as in `Ada, "Lovelace, Ada"`, are not part of the cells.
      trim: true,
      skip_empty_lines: true,
      on_record: (record: string[], context) => {
        lastRecordEnd = context.lines;
        if (record.every((cell) => cell.trim() === '')) return null;
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

function readHeader({ line, cells: columns }: Row): string[] {
  columns.forEach((column, i) => {
    if (!(IMPORTABLE_FIELDS as readonly string[]).includes(column)) {
      throw new InputError(`line ${line}: unknown column "${column}"`);
    }
    if (columns.indexOf(column) !== i) throw new InputError(`line ${line}: duplicate column "${column}"`);
  });
  return columns;
}

function cellValue(column: string, cell: string, label: string): unknown {
  if (cell.trim() === '') return null;
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
