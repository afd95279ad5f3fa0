import type { RawRecord } from '../../src/import/formats/raw-record.js';
import type { TextChunks } from '../../src/import/text-chunks.js';

/** Every record a format's reader gives for the text, whole or in the chunks given. */
export async function readAll(
  read: (text: TextChunks) => AsyncIterable<RawRecord>,
  text: string | readonly string[],
): Promise<RawRecord[]> {
  const records: RawRecord[] = [];
  for await (const record of read(typeof text === 'string' ? [text] : text)) records.push(record);
  return records;
}
