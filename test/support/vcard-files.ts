import { readdir, readFile, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { readVcardRecords } from '../../src/import/formats/vcard.js';

/** One card file as a client left it on disk. */
export interface CardFile {
  file: string;
  /** The contact id its UID names. */
  id: string | undefined;
  name: string | undefined;
  email: string | undefined;
  version: string | undefined;
  text: string;
  mtimeMs: number;
}

/** Files read at once. */
const READ_AT_ONCE = 64;

/** Every `.vcf` file of `dir`, one card each, by file name. */
export async function readCardFiles(dir: string): Promise<Map<string, CardFile>> {
  const files = (await readdir(dir)).filter((name) => name.endsWith('.vcf'));
  const cards = new Map<string, CardFile>();
  for (let start = 0; start < files.length; start += READ_AT_ONCE) {
    for (const card of await Promise.all(files.slice(start, start + READ_AT_ONCE).map((file) => readCardFile(dir, file)))) {
      cards.set(card.file, card);
    }
  }
  return cards;
}

async function readCardFile(dir: string, file: string): Promise<CardFile> {
  const path = join(dir, file);
  const [text, { mtimeMs }] = await Promise.all([readFile(path, 'utf8'), stat(path)]);
  const fields: Record<string, unknown>[] = [];
  for await (const record of readVcardRecords([text])) fields.push(record.fields);
  if (fields.length !== 1) throw new Error(`${file} holds ${fields.length} cards`);
  // VERSION is never folded nor escaped: a second parse of 10,000 cards for it cost a second and more.
  const version = /^VERSION:(.*?)\r?$/m.exec(text)?.[1];
  const { id, name, email } = fields[0] as { id?: string; name?: string; email?: string };
  return { file, id, name, email, version, text, mtimeMs };
}
