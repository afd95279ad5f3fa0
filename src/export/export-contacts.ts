import type { Contact } from 'contacts-read-api-client';
import type { ExportFormat } from './formats/format.js';

/** Text is handed to `write` in chunks of about this many characters, not one contact at a time. */
const CHUNK_CHARS = 64 * 1024;

/**
 * Writes every contact of `contacts` in `format` through `write`, waiting for each chunk to be written
 * before reading on. Calls `onContact` with the running count. Returns how many contacts were written.
 */
export async function writeContacts(
  contacts: AsyncIterable<Contact>,
  format: ExportFormat,
  write: (text: string) => Promise<void> | void,
  onContact?: (count: number) => void,
): Promise<number> {
  let chunk = format.start;
  let count = 0;
  for await (const contact of contacts) {
    chunk += format.contact(contact, count);
    count += 1;
    onContact?.(count);
    if (chunk.length >= CHUNK_CHARS) {
      await write(chunk);
      chunk = '';
    }
  }
  await write(chunk + format.end(count));
  return count;
}
