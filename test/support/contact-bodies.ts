import { Readable } from 'node:stream';
import { importFormatOf, readContacts, type ContactsFile } from '../../src/import/read-contacts.js';

export const BODY_CHUNK = 64 * 1024;

/** The bytes as a request body arrives: a stream of chunks; `sent` counts the chunks read from it. */
export function streamOf(bytes: Buffer, chunkSize = BODY_CHUNK): { body: Readable; sent: () => number } {
  let sent = 0;
  function* chunks() {
    for (let at = 0; at < bytes.length; at += chunkSize) {
      sent++;
      yield bytes.subarray(at, at + chunkSize);
    }
  }
  return { body: Readable.from(chunks(), { objectMode: false }), sent: () => sent };
}

/** The contacts of a body in this media type, read as the admin API reads a request's. */
export const readBody = (bytes: Buffer, mediaType: string, chunkSize = BODY_CHUNK): ContactsFile =>
  readContacts(streamOf(bytes, chunkSize).body, importFormatOf(mediaType)!, 'the body');

/** `count` NDJSON contacts of about 270 bytes each (`Contact N`, `cN@example.com`), then the `last` line if any. */
export function ndjsonContacts(count: number, last?: string): Buffer {
  const filler = 'x'.repeat(200);
  const lines = Array.from({ length: count }, (_, i) =>
    JSON.stringify({ name: `Contact ${i + 1}`, email: `c${i + 1}@example.com`, description: filler }),
  );
  if (last !== undefined) lines.push(last);
  return Buffer.from(`${lines.join('\n')}\n`);
}
