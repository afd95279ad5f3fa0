import type { Contact } from '../../../domain/contact.js';
import type { RawRecord } from '../raw-record.js';
import type { ColumnName, CsvExportFormat, FieldSource } from './csv-export-format.js';

/** What one source found in a row: the value, if any, and the columns it took whole. */
interface Found {
  value?: string | string[];
  taken: number[];
}

/** A field's sources, their column names resolved to the header's indexes. */
interface ResolvedSource {
  source: FieldSource;
  columns: number[];
}

const matches = (name: ColumnName, column: string): boolean => (typeof name === 'string' ? name === column : name.test(column));

/** The indexes of the named columns: in the order named, a pattern's in header order. */
function indexesOf(names: readonly ColumnName[], header: readonly string[]): number[] {
  const indexes = names.flatMap((name) => header.flatMap((column, index) => (matches(name, column) ? [index] : [])));
  return [...new Set(indexes)];
}

/**
 * Reads the rows of an export with this header into records: each field from the first of its sources with a
 * value, and as not imported every column holding data that no field took (`Nickname`, `E-mail 2 - Value (a
 * contact keeps one email)`). Columns of a `join` source are parts of the value their field took, not leftovers.
 */
export function csvExportReader(
  format: CsvExportFormat,
  header: readonly string[],
): (cells: readonly string[], label: string) => RawRecord {
  const fields = Object.entries(format.fields).map(([field, sources]) => ({
    field: field as keyof Contact,
    sources: sources.map((source): ResolvedSource => ({ source, columns: indexesOf(columnsOf(source), header) })),
  }));
  const describing = new Set(indexesOf(format.describing ?? [], header));
  const leftoverNotes = new Map<number, string>();
  for (const { field, sources } of fields) {
    for (const { source, columns } of sources) {
      if ('first' in source) for (const index of columns) leftoverNotes.set(index, source.leftover ?? `a contact keeps one ${field}`);
    }
  }
  return (cells, label) => {
    const cell = (index: number): string => {
      const value = (cells[index] ?? '').trim();
      return format.none?.[header[index]!]?.includes(value) ? '' : value;
    };
    const values = (index: number): string[] => splitValues(cell(index), format.valueSeparator);
    const record: Record<string, unknown> = {};
    const taken = new Set<number>();
    for (const { field, sources } of fields) {
      for (const { source, columns } of sources) {
        const found = find(source, columns, cell, values);
        found.taken.forEach((index) => taken.add(index));
        if (found.value === undefined) continue;
        record[field] = found.value;
        for (const { source: other, columns: parts } of sources) if ('join' in other) parts.forEach((index) => taken.add(index));
        break;
      }
    }
    const notImported = header.flatMap((column, index) => {
      if (taken.has(index) || describing.has(index) || cell(index) === '') return [];
      const note = leftoverNotes.get(index);
      return [note === undefined ? column : `${column} (${note})`];
    });
    const { origin } = format;
    return notImported.length === 0 ? { label, fields: record, origin } : { label, fields: record, notImported, origin };
  };
}

function columnsOf(source: FieldSource): readonly ColumnName[] {
  if ('first' in source) return source.first;
  if ('join' in source) return source.join;
  return [source.tags];
}

function find(
  source: FieldSource,
  columns: readonly number[],
  cell: (index: number) => string,
  values: (index: number) => string[],
): Found {
  if ('first' in source) {
    for (const index of columns) {
      const candidates = values(index);
      const value = candidates.find((candidate) => source.only?.test(candidate) ?? true);
      if (value !== undefined) return { value, taken: candidates.length === 1 ? [index] : [] };
    }
    return { taken: [] };
  }
  if ('join' in source) {
    const parts = columns.filter((index) => cell(index) !== '');
    return parts.length === 0 ? { taken: [] } : { value: parts.map(cell).join(source.with), taken: parts };
  }
  const [index] = columns;
  if (index === undefined) return { taken: [] };
  const tags = splitValues(cell(index), source.at).filter((tag) => !source.except?.includes(tag));
  return tags.length === 0 ? { taken: [index] } : { value: tags, taken: [index] };
}

function splitValues(cell: string, separator: string | undefined): string[] {
  if (cell === '') return [];
  if (separator === undefined) return [cell];
  return cell
    .split(separator)
    .map((value) => value.trim())
    .filter((value) => value !== '');
}
