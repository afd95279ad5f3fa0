import { InputError } from '../../domain/errors.js';
import { describeJsonError } from './json-error.js';
import { asFields, type RawRecord } from './raw-record.js';

/** One JSON contact object per line, labelled `line N`; blank lines are skipped. */
export function parseNdjsonRecords(text: string): RawRecord[] {
  const records: RawRecord[] = [];
  text.split(/\r?\n/).forEach((line, index) => {
    if (line.trim() === '') return;
    const label = `line ${index + 1}`;
    records.push({ label, fields: asFields(parseLine(line, label), label) });
  });
  return records;
}

function parseLine(line: string, label: string): unknown {
  try {
    return JSON.parse(line);
  } catch (error) {
    const { reason, position } = describeJsonError(error);
    const where = position === null ? '' : ` at column ${position + 1}`;
    throw new InputError(`${label}: invalid JSON${where}: ${reason}`);
  }
}
