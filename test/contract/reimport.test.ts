import { randomUUID } from 'node:crypto';
import type { FastifyInstance, LightMyRequestResponse } from 'fastify';
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { Contact } from '../../src/domain/contact.js';
import { writeContacts } from '../../src/export/export-contacts.js';
import { EXPORT_FORMAT_NAMES, EXPORT_FORMATS, type ExportFormatName } from '../../src/export/export-format.js';
import type { Store, User } from '../../src/store/store.js';
import { buildTestApp } from '../support/app.js';
import { describeEachBackend } from '../support/backends.js';
import { openOtherConnection, type OtherConnection } from '../support/other-connection.js';
import { listContactChanges, listContacts } from '../support/requests.js';
import { contactRecord, createKey, createUser } from '../support/seed.js';
import { AWKWARD_CONTACT } from '../support/awkward-contact.js';
import { useTempFiles } from '../support/temp-files.js';
import { readWholeFile } from '../support/read-records.js';

interface Change {
  type: 'upsert' | 'merge' | 'delete';
  id: string;
  contact?: Contact;
}

const writeTemp = useTempFiles();

/** Values every export format has to carry back exactly: separators, quotes, line breaks, awkward tag lists. */
const AWKWARD = [
  { ...AWKWARD_CONTACT, description: 'line one\nline two; with, separators' },
  { phone: '+15550100', birthday: '--02-29', tags: [] },
  { name: 'Text birthday', birthday: 'around 1950', tags: ['a;b', 'c'] },
  { name: 'Digits birthday', birthday: '19900101', tags: ['[draft]'], linkedin_url: 'https://example.com/not-linkedin' },
  { name: '  Trimmed on the way in  ', company: 'Ünïcode 🚀 Ltd', title: 'Tab\tinside' },
];

describeEachBackend('re-imports record only real changes', (db) => {
  let app: FastifyInstance;
  let store: Store;
  let owner: User;
  let key: string;
  let other: OtherConnection;
  let directId: string;

  const ok = async <T>(request: Promise<LightMyRequestResponse>): Promise<T> => {
    const response = await request;
    expect(response.statusCode, response.body).toBe(200);
    return response.json() as T;
  };
  const listing = async (): Promise<Contact[]> => {
    const contacts: Contact[] = [];
    for (let offset = 0; ; offset += 100) {
      const page = await ok<{ data: Contact[]; pagination: { has_more: boolean } }>(listContacts(app, key, `limit=100&offset=${offset}`));
      contacts.push(...page.data);
      if (!page.pagination.has_more) return contacts;
    }
  };
  const position = async () => (await ok<{ next_since: string }>(listContactChanges(app, key))).next_since;
  const changesSince = async (since: string) =>
    (await ok<{ data: Change[] }>(listContactChanges(app, key, `since=${since}&limit=1000`))).data;
  const exportFile = async (format: ExportFormatName, contacts: Contact[]) => {
    let text = '';
    await writeContacts(
      (async function* () {
        yield* contacts;
      })(),
      EXPORT_FORMATS[format],
      (chunk) => void (text += chunk),
    );
    return writeTemp(`${randomUUID()}.${format}`, text);
  };
  const importFile = async (path: string) => store.contacts.importContacts(owner.id, (await readWholeFile(path)).records);

  beforeAll(async () => {
    store = db().store;
    app = await buildTestApp(store);
    owner = await createUser(store);
    key = (await createKey(store, owner.id)).key;
    other = await openOtherConnection(db());
    const [survivor, duplicate] = [randomUUID(), randomUUID()];
    await store.contacts.importContacts(owner.id, [
      ...AWKWARD.map((values) => contactRecord(values)),
      contactRecord({ name: 'Survivor' }, survivor),
      contactRecord({ name: 'Duplicate' }, duplicate),
    ]);
    await store.contacts.merge(owner.id, duplicate, survivor);
    // A host product's own write: PostgreSQL keeps its microseconds, which the API shows truncated to milliseconds.
    directId = randomUUID();
    const at = other.instant(Date.parse('2024-03-04T05:06:07.890Z'), 123);
    await other.run(
      'INSERT INTO contacts (id, owner_id, is_self, name, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?)',
      directId,
      owner.id,
      db().backend === 'sqlite' ? 0 : false,
      'Written by the host product',
      at,
      at,
    );
  });
  afterAll(async () => {
    await other.close();
    await app.close();
  });

  it.each(EXPORT_FORMAT_NAMES)('re-importing a %s export changes nothing and records nothing', async (format) => {
    const before = await listing();
    expect(before).toHaveLength(AWKWARD.length + 2);
    const path = await exportFile(format, before);
    const since = await position();

    expect(await importFile(path)).toEqual({
      created: 0,
      updated: 0,
      unchanged: before.length,
      merged: 0,
      matchedByEmail: 0,
      matchedByLinkedinUrl: 0,
      duplicateEmails: [],
      duplicateEmailCount: 0,
    });
    expect(await changesSince(since)).toEqual([]);
    expect(await listing()).toEqual(before);
  });

  it('an import that changes one field of one contact records one upsert, and moves its updated_at to the import', async () => {
    const before = await listing();
    const edited = before.map((contact) => (contact.id === directId ? { ...contact, title: 'Edited in the file' } : contact));
    const since = await position();
    const startedAt = new Date().toISOString();

    expect(await importFile(await exportFile('json', edited))).toEqual({
      created: 0,
      updated: 1,
      unchanged: before.length - 1,
      merged: 0,
      matchedByEmail: 0,
      matchedByLinkedinUrl: 0,
      duplicateEmails: [],
      duplicateEmailCount: 0,
    });
    const changes = await changesSince(since);
    expect(changes.map((change) => [change.type, change.id, change.contact?.title])).toEqual([['upsert', directId, 'Edited in the file']]);
    // The file still carried the stored updated_at: that is when it was exported, not when it changed.
    expect(changes[0]!.contact!.updated_at >= startedAt).toBe(true);
    expect(await listing()).toEqual(before.map((contact) => (contact.id === directId ? changes[0]!.contact : contact)));
  });

  it('keeps an updated_at the record gives with a change; alone, a different updated_at is no change', async () => {
    const [target] = await listing();
    const since = await position();
    const onlyTime = contactRecord({ updated_at: '2030-01-01T00:00:00.000Z' }, target!.id);
    expect(await store.contacts.importContacts(owner.id, [onlyTime])).toMatchObject({ updated: 0, unchanged: 1 });
    expect(await changesSince(since)).toEqual([]);

    const withChange = contactRecord({ school: 'Changed', updated_at: '2025-02-03T04:05:06.789Z' }, target!.id);
    expect(await store.contacts.importContacts(owner.id, [withChange])).toMatchObject({ updated: 1, unchanged: 0 });
    const [change] = await changesSince(since);
    expect(change!.contact).toMatchObject({ school: 'Changed', updated_at: '2025-02-03T04:05:06.789Z' });
  });

  it('a re-imported merge is no merge; a new one is counted', async () => {
    const [a, b] = [randomUUID(), randomUUID()];
    await store.contacts.importContacts(owner.id, [contactRecord({ name: 'A' }, a), contactRecord({ name: 'B' }, b)]);
    const merging = { label: 'r', contact: { ...contactRecord({ name: 'B' }, b).contact, mergedInto: a } };
    expect(await store.contacts.importContacts(owner.id, [merging])).toEqual({
      created: 0,
      updated: 0,
      unchanged: 1,
      merged: 1,
      matchedByEmail: 0,
      matchedByLinkedinUrl: 0,
      duplicateEmails: [],
      duplicateEmailCount: 0,
    });
    const since = await position();
    expect(await store.contacts.importContacts(owner.id, [merging])).toEqual({
      created: 0,
      updated: 0,
      unchanged: 1,
      merged: 0,
      matchedByEmail: 0,
      matchedByLinkedinUrl: 0,
      duplicateEmails: [],
      duplicateEmailCount: 0,
    });
    expect(await changesSince(since)).toEqual([]);
  });
});
