import { readdir, readFile, stat } from 'node:fs/promises';
import { join } from 'node:path';
import type { Contact } from 'contacts-read-api-client';
import { expect } from 'vitest';
import { readVcardRecords } from '../../src/import/formats/vcard.js';
import type { CarddavNetwork } from './carddav-network.js';

/** What a client holds of a card: the contact id its UID names, its FN, EMAIL and VERSION. */
export interface HeldCard {
  id: string | undefined;
  name: string | undefined;
  email: string | undefined;
  version: string | undefined;
}

/** One card file as a client left it on disk. */
export interface CardFile extends HeldCard {
  file: string;
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
  return { file, ...(await readCard(text, file)), text, mtimeMs };
}

/** What one card's text says. */
export async function readCard(text: string, where: string): Promise<HeldCard> {
  const fields: Record<string, unknown>[] = [];
  for await (const record of readVcardRecords([text])) fields.push(record.fields);
  if (fields.length !== 1) throw new Error(`${where} holds ${fields.length} cards`);
  // VERSION is never folded nor escaped: a second parse of 10,000 cards for it cost a second and more.
  const version = /^VERSION:(.*?)\r?$/m.exec(text)?.[1];
  const { id, name, email } = fields[0] as { id?: string; name?: string; email?: string };
  return { id, name, email, version };
}

/** The cards a client holds are the listed contacts, one each: UID = id, FN the name, EMAIL the email; vCard 3.0. */
export function expectCardsEqualListing(cards: Iterable<HeldCard>, listing: Map<string, Contact>, network: CarddavNetwork): void {
  const byId = (a: { id: string | undefined }, b: { id: string | undefined }) => (a.id! < b.id! ? -1 : 1);
  const held = [...cards].map(({ id, name, email, version }) => ({ id, name, email, version })).sort(byId);
  const listed = [...listing.values()]
    .map(({ id, name, email }) => ({ id, name: name ?? undefined, email: email ?? undefined, version: '3.0' }))
    .sort(byId);
  // One comparison of the whole: 10,000 expects would cost more than the sync.
  expect(held).toEqual(listed);
  const ids = new Set(held.map(({ id }) => id));
  expect([...network.merged, network.self].filter((hidden) => ids.has(hidden))).toEqual([]);
}
