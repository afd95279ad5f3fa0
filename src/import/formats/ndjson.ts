import { InputError } from '../../domain/errors.js';
import { numberedLines, type TextChunks } from '../text-chunks.js';
import { describeJsonError } from './json-error.js';
import { asFields, type RawRecord } from './raw-record.js';

/** One JSON contact object per line, labelled `line N`; blank lines are skipped. */
export async function* readNdjsonRecords(text: TextChunks): AsyncGenerator<RawRecord> {
  for await (const line of numberedLines(text)) {
    if (line.text.trim() === '') continue;
    const label = `line ${line.number}`;
    yield { label, fields: asFields(parseLine(line.text, label), label) };
  }
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
