import { beforeAll, describe, expect, it } from 'vitest';
import type { ContactValues } from '../../src/domain/contact.js';
import { InputError, NotFoundError } from '../../src/domain/errors.js';
import { importFormatOf, readContacts, type ContactsFile } from '../../src/import/read-contacts.js';
import { deleteContacts, importContacts, mergeContacts } from '../../src/operations/contacts.js';
import type { User } from '../../src/operations/users.js';
import { describeEachBackend } from '../support/backends.js';
import { streamOf } from '../support/contact-bodies.js';
import { createUser } from '../support/seed.js';

/** A file read as `contacts import` reads one, labelled `line N` for the Nth row as in a CSV with a header. */
function csvFile(rows: (Partial<ContactValues> | 'empty')[]): ContactsFile {
  const lines = ['', ...rows.map((row) => JSON.stringify(row === 'empty' ? {} : row))];
  return readContacts(streamOf(Buffer.from(lines.join('\n'))).body, importFormatOf('application/x-ndjson')!, 'the file');
}

describeEachBackend('Operations: contacts', (db) => {
  const listing = async (ownerId: string) => db().store.contacts.listPage(ownerId, { limit: 100, offset: 0 });

  describe('importContacts: what became of each record', () => {
    let owner: User;
    let adaId: string;
    const network = () =>
      csvFile([
        { name: 'Ada Lovelace', email: 'ADA@example.com', title: 'Countess' },
        'empty',
        { name: 'Grace', email: 'grace@navy.example' },
        { name: 'Grace Hopper', email: 'Grace@Navy.example', title: 'Admiral' },
      ]);

    beforeAll(async () => {
      owner = await createUser(db().store);
      await importContacts(db().store, { user: owner.id, file: csvFile([{ name: 'Ada', email: 'ada@example.com' }]) });
      adaId = (await listing(owner.id)).contacts[0]!.id;
      // Another user's contact with the same email is no concern of this owner's import.
      const stranger = await createUser(db().store);
      await importContacts(db().store, { user: stranger.email, file: csvFile([{ email: 'grace@navy.example' }]) });
    });

    it('counts the records imported and created, and reports empty records skipped and emails another contact has', async () => {
      const before = await listing(owner.id);
      expect(await importContacts(db().store, { user: owner.email, file: network() })).toEqual({
        imported: 3,
        created: 3,
        updated: 0,
        unchanged: 0,
        merged: 0,
        without_id: 3,
        matched_by_email: 0,
        matched_by_linkedin_url: 0,
        skipped_empty: { count: 1, records: ['line 3'] },
        duplicate_emails: {
          count: 2,
          records: [
            { record: 'line 2', email: 'ADA@example.com', same_as: `contact ${adaId}` },
            { record: 'line 5', email: 'Grace@Navy.example', same_as: 'line 4' },
          ],
        },
        not_imported: [],
      });
      const after = await listing(owner.id);
      expect(after.total).toBe(before.total + 3);
      await deleteContacts(db().store, { user: owner.id, ids: after.contacts.slice(1).map((c) => c.id) });
    });

    it('matching on email, a record without id updates the contact with the same email, ASCII case ignored', async () => {
      expect(await importContacts(db().store, { user: owner.id, file: network(), match: ['email'] })).toMatchObject({
        created: 1,
        updated: 2,
        unchanged: 0,
        without_id: 3,
        matched_by_email: 2,
      });
      const { contacts } = await listing(owner.id);
      expect(contacts.map((c) => [c.id === adaId, c.name, c.email, c.title])).toEqual([
        [true, 'Ada Lovelace', 'ADA@example.com', 'Countess'],
        [false, 'Grace Hopper', 'Grace@Navy.example', 'Admiral'],
      ]);
      // Again: every record finds its contact (both Grace rows the same one, in turn), and nothing is created.
      expect(await importContacts(db().store, { user: owner.id, file: network(), match: ['email'] })).toMatchObject({
        created: 0,
        updated: 2,
        unchanged: 1,
        matched_by_email: 3,
        duplicate_emails: { count: 0, records: [] },
      });
      expect((await listing(owner.id)).total).toBe(2);
    });
  });

  it('importContacts counts every place but lists the first 100', async () => {
    const user = await createUser(db().store);
    const file = csvFile([{ name: 'Only one' }, ...Array<'empty'>(150).fill('empty')]);
    const summary = await importContacts(db().store, { user: user.id, file });
    expect(summary.skipped_empty.count).toBe(150);
    expect(summary.skipped_empty.records).toEqual(Array.from({ length: 100 }, (_, index) => `line ${index + 3}`));
  });

  it('importContacts is all or nothing: a refused record leaves the owner’s contacts as they were', async () => {
    const [owner, other] = [await createUser(db().store), await createUser(db().store)];
    await importContacts(db().store, { user: other.id, file: csvFile([{ name: 'Theirs' }]) });
    const theirs = (await listing(other.id)).contacts[0]!.id;
    const before = await listing(owner.id);
    const file = csvFile([{ name: 'New 1' }, { name: 'Hijack', id: theirs } as Partial<ContactValues>]);
    await expect(importContacts(db().store, { user: owner.id, file })).rejects.toThrow(
      new InputError(`line 3: id ${theirs} is not one of this user's importable contacts`),
    );
    expect(await listing(owner.id)).toEqual(before);
  });

  it('mergeContacts hides the duplicate from listings and totals', async () => {
    const owner = await createUser(db().store);
    await importContacts(db().store, { user: owner.id, file: csvFile(['A', 'B', 'C'].map((name) => ({ name }))) });
    const [a, b] = (await listing(owner.id)).contacts.map((contact) => contact.id) as [string, string];
    await mergeContacts(db().store, { user: owner.email, duplicateId: b, survivorId: a });
    const after = await listing(owner.id);
    expect(after.total).toBe(2);
    expect(after.contacts.map((contact) => contact.name)).toEqual(['A', 'C']);
    expect((await db().store.contacts.get(owner.id, b))?.contact.id).toBe(a);
  });

  it('deleteContacts deletes contacts with the duplicates merged into them, all or nothing', async () => {
    const owner = await createUser(db().store);
    await importContacts(db().store, { user: owner.id, file: csvFile(['A', 'B', 'C'].map((name) => ({ name }))) });
    const [a, b, c] = (await listing(owner.id)).contacts.map((contact) => contact.id) as [string, string, string];
    await mergeContacts(db().store, { user: owner.id, duplicateId: b, survivorId: a });
    const unknown = '00000000-0000-4000-8000-000000000000';
    await expect(deleteContacts(db().store, { user: owner.email, ids: [c, unknown] })).rejects.toThrow(
      new NotFoundError(`Contact ${unknown} is not one of this user's contacts`),
    );
    expect((await listing(owner.id)).contacts.map((contact) => contact.id)).toEqual([a, c]);
    expect(await deleteContacts(db().store, { user: owner.email, ids: [a] })).toBe(1);
    expect((await listing(owner.id)).contacts.map((contact) => contact.id)).toEqual([c]);
    expect(await db().store.contacts.get(owner.id, b)).toBeNull();
  });

  it('each refuses an unknown user with NotFoundError naming it', async () => {
    const user = 'ghost@example.com';
    const refusal = new NotFoundError(`No user with email or id "${user}"`);
    await expect(importContacts(db().store, { user, file: csvFile([]) })).rejects.toThrow(refusal);
    await expect(mergeContacts(db().store, { user, duplicateId: 'a', survivorId: 'b' })).rejects.toThrow(refusal);
    await expect(deleteContacts(db().store, { user, ids: ['a'] })).rejects.toThrow(refusal);
  });
});
