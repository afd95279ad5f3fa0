import { InputError } from '../../domain/errors.js';
import { describeJsonError } from './json-error.js';
import { asFields, type RawRecord } from './raw-record.js';

/** A JSON array of contact objects, labelled `record N`. Blank text holds no records. */
export function parseJsonRecords(text: string): RawRecord[] {
  if (text.trim() === '') return [];
  const records = parseJson(text);
  if (!Array.isArray(records)) throw new InputError('expected a JSON array of contact objects');
  return records.map((value: unknown, index) => {
    const label = `record ${index + 1}`;
    return { label, fields: asFields(value, label) };
  });
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch (error) {
    const { reason, position } = describeJsonError(error);
    if (position === null) throw new InputError(`invalid JSON: ${reason}`);
    const before = text.slice(0, position).split('\n');
    const line = before.length;
    const column = before.at(-1)!.length + 1;
    throw new InputError(`invalid JSON at line ${line} column ${column}: ${reason}`);
  }
}
