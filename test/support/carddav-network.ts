import { randomUUID } from 'node:crypto';
import { ContactsClient, type Contact } from 'contacts-read-api-client';
import { cliJson, writeTempFile } from './cli.js';
import { selfContactId } from './self-contact.js';

/** A user's network made through the CLI, as an operator would: what a CardDAV client should see of it, and what not. */
export interface CarddavNetwork {
  userId: string;
  email: string;
  /** The user's API key: the password a CardDAV client is given. */
  key: string;
  /** The listable contacts' ids, in the order they were imported. */
  listed: string[];
  /** Duplicates merged into listed contacts: never a card. */
  merged: string[];
  /** The user's own self row: never a card. */
  self: string;
}

/** Names a vCard writer must escape or encode (RFC 6350 §3.4: `,` `;` `\`, and text beyond ASCII). */
const AWKWARD_NAMES = ['Zoë Ångström', 'O’Brien, Jr.; Ph.D.', 'Back\\slash Person', '李 小龍', 'Émilie 🙂 Durand'];

function contactValues(index: number): Record<string, string> {
  const awkward = index % 500 === 0 ? AWKWARD_NAMES[(index / 500) % AWKWARD_NAMES.length] : null;
  return {
    name: awkward ?? `Person ${index} Example`,
    email: `person${index}@example.com`,
    phone: `+1 555 01${String(index).padStart(5, '0')}`,
    company: index % 3 === 0 ? `Company ${index % 97}` : '',
  };
}

/**
 * Creates a Pro user with a key and `size` listable contacts (one `contacts import`), plus `duplicates` contacts
 * merged into some of them (`contacts merge`); the user's self row comes with the user.
 */
export async function seedCarddavNetwork(databaseUrl: string, size: number, duplicates: number): Promise<CarddavNetwork> {
  const email = `carddav-${randomUUID()}@example.com`;
  const user = await cliJson<{ id: string }>(databaseUrl, 'users', 'create', '--email', email, '--name', 'Dav Owner', '--plan', 'pro');
  const { key } = await cliJson<{ key: string }>(databaseUrl, 'keys', 'create', '--user', user.id, '--label', 'carddav');
  const listed = Array.from({ length: size }, () => randomUUID());
  const merged = Array.from({ length: duplicates }, () => randomUUID());
  const records = [
    ...listed.map((id, index) => ({ id, ...contactValues(index) })),
    ...merged.map((id, index) => ({ id, ...contactValues(index), name: `Duplicate ${index}` })),
  ];
  await cliJson(databaseUrl, 'contacts', 'import', '--user', user.id, writeTempFile('network.json', JSON.stringify(records)));
  for (const [index, id] of merged.entries()) {
    await cliJson(databaseUrl, 'contacts', 'merge', '--user', user.id, id, '--into', listed[index]!);
  }
  return { userId: user.id, email, key, listed, merged, self: await selfContactId(databaseUrl, user.id) };
}

/** What a round of changes did, by contact id. */
export interface NetworkChanges {
  edited: string[];
  /** Merged away (each into a listed contact that stays). */
  merged: string[];
  deleted: string[];
}

/** How long a server may take to see the CLI's writes: its visibility bound is one second. */
const VISIBLE_WITHIN_MS = 5000;

/**
 * Changes `edits + merges + deletes` distinct listed contacts through the CLI: edits by re-importing them with a new name
 * and email, merges one by one, deletes in one command. Updates `network.listed` to what stays listable, and returns once
 * the server at `origin` lists that many (the edits were written before).
 */
export async function changeNetwork(
  databaseUrl: string,
  origin: string,
  network: CarddavNetwork,
  counts: { edits: number; merges: number; deletes: number },
): Promise<NetworkChanges> {
  // Spread over the network, and never the survivors of the seeded merges (the first ids).
  const stride = Math.floor(network.listed.length / (counts.edits + counts.merges * 2 + counts.deletes + 1));
  const picked = Array.from(
    { length: counts.edits + counts.merges * 2 + counts.deletes },
    (_, index) => network.listed[(index + 1) * stride]!,
  );
  const edited = picked.slice(0, counts.edits);
  const merged = picked.slice(counts.edits, counts.edits + counts.merges);
  const survivors = picked.slice(counts.edits + counts.merges, counts.edits + counts.merges * 2);
  const deleted = picked.slice(counts.edits + counts.merges * 2);
  const edits = edited.map((id, index) => ({ id, name: `Edited ${index} Person`, email: `edited${index}@example.org` }));
  await cliJson(databaseUrl, 'contacts', 'import', '--user', network.userId, writeTempFile('edits.json', JSON.stringify(edits)));
  for (const [index, id] of merged.entries()) {
    await cliJson(databaseUrl, 'contacts', 'merge', '--user', network.userId, id, '--into', survivors[index]!);
  }
  if (deleted.length > 0) await cliJson(databaseUrl, 'contacts', 'delete', '--user', network.userId, ...deleted);
  const gone = new Set([...merged, ...deleted]);
  network.listed = network.listed.filter((id) => !gone.has(id));
  const client = new ContactsClient({ baseUrl: origin, apiKey: network.key });
  const deadline = Date.now() + VISIBLE_WITHIN_MS;
  while ((await client.listContacts({ limit: 1 })).pagination.total !== network.listed.length) {
    if (Date.now() > deadline) throw new Error(`the server did not list ${network.listed.length} contacts within ${VISIBLE_WITHIN_MS} ms`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  return { edited, merged, deleted };
}

/** Every contact the REST API lists for the key, by id: what the address book must equal. */
export async function restListing(origin: string, key: string): Promise<Map<string, Contact>> {
  const client = new ContactsClient({ baseUrl: origin, apiKey: key });
  const listing = new Map<string, Contact>();
  for await (const contact of client.contacts()) listing.set(contact.id, contact);
  return listing;
}
