import { readdir, readFile, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { readVcardRecords } from '../../src/import/formats/vcard.js';
import { readVcards } from '../../src/import/formats/vcard-syntax.js';

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

/** Every `.vcf` file of `dir`, one card each, by file name. */
export async function readCardFiles(dir: string): Promise<Map<string, CardFile>> {
  const cards = new Map<string, CardFile>();
  for (const file of (await readdir(dir)).filter((name) => name.endsWith('.vcf'))) {
    const path = join(dir, file);
    const [text, { mtimeMs }] = await Promise.all([readFile(path, 'utf8'), stat(path)]);
    const fields: Record<string, unknown>[] = [];
    for await (const record of readVcardRecords([text])) fields.push(record.fields);
    if (fields.length !== 1) throw new Error(`${file} holds ${fields.length} cards`);
    let version: string | undefined;
    for await (const card of readVcards([text])) version = card.properties.find(({ name }) => name === 'VERSION')?.value;
    const { id, name, email } = fields[0] as { id?: string; name?: string; email?: string };
    cards.set(file, { file, id, name, email, version, text, mtimeMs });
  }
  return cards;
}
