import { readFile } from 'node:fs/promises';
import { assertUniqueIds, normalizeContactInput } from '../domain/contact-input.js';
import { InputError } from '../domain/errors.js';
import { parseBillingPlan } from '../domain/billing-plan.js';
import { isEmailAddress } from '../domain/email.js';
import type { ImportRecord, NewUser, OwnerBatch } from '../store/store.js';
import { readNdjsonRecords } from './formats/ndjson.js';
import { readFileBytes } from './read-contacts.js';
import { utf8Text } from './text-chunks.js';

const BATCH_SIZE = 2000;
const USER_FIELDS = ['email', 'name', 'plan'];

/** Reads a users NDJSON file: one `{ "email", "name"?, "plan"? }` per line; plan defaults to free. */
export async function readUsersFile(path: string): Promise<NewUser[]> {
  const text = await readFile(path, 'utf8').catch((error: Error) => {
    throw new InputError(`cannot read ${path}: ${error.message}`);
  });
  const users: NewUser[] = [];
  for (const [index, line] of text.split('\n').entries()) {
    if (line.trim() === '') continue;
    const label = `${path} line ${index + 1}`;
    const raw = parseLine(line, label);
    const unknown = Object.keys(raw).find((field) => !USER_FIELDS.includes(field));
    if (unknown) throw new InputError(`${label}: unknown field "${unknown}"`);
    if (typeof raw.email !== 'string' || !isEmailAddress(raw.email.trim()))
      throw new InputError(`${label}: "email" must be an email address`);
    if (raw.name !== undefined && raw.name !== null && typeof raw.name !== 'string')
      throw new InputError(`${label}: "name" must be a string`);
    users.push({
      email: raw.email.trim(),
      name: typeof raw.name === 'string' && raw.name.trim() !== '' ? raw.name.trim() : null,
      plan: raw.plan === undefined ? 'free' : wrap(label, () => parseBillingPlan(String(raw.plan))),
    });
  }
  return users;
}

/**
 * Streams a contacts NDJSON file (read as `contacts import` reads one) whose lines carry the owner's email or id in
 * `owner`, as batches of consecutive lines of one owner; the whole file is never held in memory.
 */
export async function* readOwnedContactsFile(path: string): AsyncGenerator<OwnerBatch> {
  let batch: OwnerBatch | null = null;
  for await (const { label, fields } of readNdjsonRecords(utf8Text(readFileBytes(path), path))) {
    const { owner, ...contact } = fields;
    if (typeof owner !== 'string' || owner.trim() === '')
      throw new InputError(`${label}: "owner" must name the contact's user by email or id`);
    const record: ImportRecord = { label, contact: wrap(label, () => normalizeContactInput(contact)) };
    if (batch !== null && (batch.owner !== owner || batch.records.length >= BATCH_SIZE)) {
      assertUniqueIds(batch.records);
      yield batch;
      batch = null;
    }
    batch ??= { owner, records: [] };
    batch.records.push(record);
  }
  if (batch !== null) {
    assertUniqueIds(batch.records);
    yield batch;
  }
}

function parseLine(line: string, label: string): Record<string, unknown> {
  let value: unknown;
  try {
    value = JSON.parse(line);
  } catch (error) {
    throw new InputError(`${label}: invalid JSON: ${(error as Error).message}`);
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw new InputError(`${label}: expected a JSON object`);
  return value as Record<string, unknown>;
}

function wrap<T>(label: string, read: () => T): T {
  try {
    return read();
  } catch (error) {
    throw error instanceof InputError ? new InputError(`${label}: ${error.message}`) : error;
  }
}
