import { randomUUID } from 'node:crypto';
import { beforeEach, describe, expect, it } from 'vitest';
import { normalizeContactInput } from '../../src/domain/contact-input.js';
import { InputError, NotFoundError } from '../../src/domain/errors.js';
import type { RecordOrigin } from '../../src/domain/import-matching.js';
import type { ImportRecord, Store, User } from '../../src/store/store.js';
import { describeEachBackend } from '../support/backends.js';
import { contactRecord, createUser } from '../support/seed.js';
import { selfContactId } from '../support/self-contact.js';

/** What the owner's listing shows: ids and names in order, and the total. */
async function listing(store: Store, ownerId: string): Promise<{ total: number; contacts: [string, string | null][] }> {
  const page = await store.contacts.listPage(ownerId, { limit: 100, offset: 0 });
  return { total: page.total, contacts: page.contacts.map((contact) => [contact.id, contact.name]) };
}

const merging = (id: string, into: string, label = 'merge'): ImportRecord => ({
  label,
  contact: normalizeContactInput({ id, merged_into: into }),
});

/** Runs `change`, which must fail with `message`, and proves it left the owner's contacts as they were. */
async function expectRefusedUnchanged(
  store: Store,
  ownerId: string,
  change: () => Promise<unknown>,
  message: string,
  type: new (...args: never[]) => Error = InputError,
): Promise<void> {
  const before = await listing(store, ownerId);
  const failure = change();
  await expect(failure).rejects.toThrow(type);
  await expect(failure).rejects.toThrow(message);
  expect(await listing(store, ownerId)).toEqual(before);
}

describeEachBackend('Store contract: import', (db) => {
  let owner: User;
  let other: User;
  beforeEach(async () => {
    owner = await createUser(db().store);
    other = await createUser(db().store);
  });

  it("refuses another owner's contact id, naming the record, and writes none of the import", async () => {
    const { store } = db();
    const theirs = randomUUID();
    await store.contacts.importContacts(other.id, [contactRecord({ name: 'Theirs' }, theirs)]);
    const records = [contactRecord({ name: 'Mine 1' }, null, 'line 2'), contactRecord({ name: 'Taken' }, theirs, 'line 3')];
    await expectRefusedUnchanged(
      store,
      owner.id,
      () => store.contacts.importContacts(owner.id, records),
      `line 3: id ${theirs} is not one of this user's importable contacts`,
    );
    expect(await listing(store, other.id)).toEqual({ total: 1, contacts: [[theirs, 'Theirs']] });
  });

  it("refuses the id of the owner's own self row", async () => {
    const { store, databaseUrl } = db();
    const self = await selfContactId(databaseUrl, owner.id);
    await expectRefusedUnchanged(
      store,
      owner.id,
      () => store.contacts.importContacts(owner.id, [contactRecord({ name: 'Me' }, self, 'record 1')]),
      `record 1: id ${self} is not one of this user's importable contacts`,
    );
  });

  it('NUL characters never reach a store: the validated record type comes only from the normaliser, which refuses them', () => {
    expect(() => normalizeContactInput({ enrichment: { note: 'a\u0000b' } })).toThrow(
      'field "enrichment" must not contain NUL characters or unpaired surrogates',
    );
    expect(() => normalizeContactInput({ research_data: { ['k\u0000']: 1 } })).toThrow(/research_data/);
    expect(() => normalizeContactInput({ tags: ['ok', 'b\u0000d'] })).toThrow(
      'field "tags" must not contain NUL characters or unpaired surrogates',
    );
    expect(() => normalizeContactInput({ name: 'a\u0000' })).toThrow('field "name" must not contain NUL characters');
  });

  it('stores the same JSON on every database, unpaired-surrogate-free text and nested objects included', async () => {
    const { store } = db();
    const id = randomUUID();
    const enrichment = { 'emoji 🎉': ['ü', { deep: [1, 2.5, null, true] }], quote: '"\\' };
    await store.contacts.importContacts(owner.id, [contactRecord({ name: 'Jsön', enrichment, tags: ['a', 'b'] }, id)]);
    expect((await store.contacts.get(owner.id, id))!.contact).toMatchObject({ name: 'Jsön', enrichment, tags: ['a', 'b'] });
  });

  it('applies merged_into in record order within one import, keeping every chain one step long', async () => {
    const { store } = db();
    const [a, b, c] = [randomUUID(), randomUUID(), randomUUID()];
    await store.contacts.importContacts(owner.id, [
      contactRecord({ name: 'A', created_at: '2024-01-01T00:00:00.000Z' }, a),
      contactRecord({ name: 'B', created_at: '2024-01-02T00:00:00.000Z' }, b),
      contactRecord({ name: 'C', created_at: '2024-01-03T00:00:00.000Z' }, c),
      merging(a, b),
      // B goes into C, and A (merged into B) follows it there.
      merging(b, c),
    ]);
    expect(await listing(store, owner.id)).toEqual({ total: 1, contacts: [[c, 'C']] });
    expect(await store.contacts.get(owner.id, a)).toMatchObject({ contact: { id: c }, mergedFrom: a });
    expect(await store.contacts.get(owner.id, b)).toMatchObject({ contact: { id: c }, mergedFrom: b });
  });

  it('refuses a record merging into a contact already merged, naming it, and writes none of the import', async () => {
    const { store } = db();
    const [a, b, c, d] = [randomUUID(), randomUUID(), randomUUID(), randomUUID()];
    await store.contacts.importContacts(owner.id, [
      contactRecord({ name: 'A' }, a),
      contactRecord({ name: 'B' }, b),
      contactRecord({ name: 'C' }, c),
    ]);
    await store.contacts.importContacts(owner.id, [merging(b, c)]);
    await expectRefusedUnchanged(
      store,
      owner.id,
      () => store.contacts.importContacts(owner.id, [contactRecord({ name: 'D' }, d, 'line 1'), merging(a, b, 'line 2')]),
      `line 2: Contact ${b} is already merged into ${c} and cannot be merged into`,
    );
    expect(await store.contacts.get(owner.id, d)).toBeNull();
  });

  it('re-importing a merge already made does nothing; merging into itself, into an unknown id or into another owner is refused', async () => {
    const { store } = db();
    const [a, b, theirs] = [randomUUID(), randomUUID(), randomUUID()];
    await store.contacts.importContacts(other.id, [contactRecord({ name: 'Theirs' }, theirs)]);
    await store.contacts.importContacts(owner.id, [contactRecord({ name: 'A' }, a), contactRecord({ name: 'B' }, b), merging(a, b)]);
    const merged = await listing(store, owner.id);
    await store.contacts.importContacts(owner.id, [merging(a, b)]);
    expect(await listing(store, owner.id)).toEqual(merged);
    await expectRefusedUnchanged(
      store,
      owner.id,
      () => store.contacts.importContacts(owner.id, [merging(b, b, 'r1')]),
      'r1: A contact cannot be merged into itself',
    );
    const unknown = randomUUID();
    await expectRefusedUnchanged(
      store,
      owner.id,
      () => store.contacts.importContacts(owner.id, [merging(b, unknown, 'r2')]),
      `r2: Contact ${unknown} is not one of this user's contacts`,
    );
    await expectRefusedUnchanged(
      store,
      owner.id,
      () => store.contacts.importContacts(owner.id, [merging(b, theirs, 'r3')]),
      `r3: Contact ${theirs} is not one of this user's contacts`,
    );
  });
});

describeEachBackend('Store contract: the emails an import names', (db) => {
  let owner: User;
  let stored: string;
  let merged: string;
  beforeEach(async () => {
    const { store } = db();
    owner = await createUser(db().store);
    [stored, merged] = [randomUUID(), randomUUID()];
    await store.contacts.importContacts(owner.id, [
      contactRecord({ name: 'Ada', email: 'Ada@Example.com', created_at: '2024-01-01T00:00:00.000Z' }, stored),
      contactRecord({ name: 'Ada (old)', email: 'ada@example.com' }, merged),
      merging(merged, stored),
    ]);
    // Another owner's contact holding the same emails is never this owner's concern.
    await store.contacts.importContacts((await createUser(store)).id, [contactRecord({ email: 'ada@example.com' })]);
  });
  const names = async () =>
    (await db().store.contacts.listPage(owner.id, { limit: 100, offset: 0 })).contacts.map((c) => [c.name, c.email]);

  it('reports records whose email, ASCII case ignored, a listable contact of the owner or an earlier record holds', async () => {
    const outcome = await db().store.contacts.importContacts(
      owner.id,
      [
        contactRecord({ name: 'Ada again', email: 'ADA@example.COM' }, null, 'line 2'),
        contactRecord({ name: 'Åsa', email: 'Åsa@example.com' }, null, 'line 3'),
        // Only ASCII letters fold, on both databases.
        contactRecord({ name: 'åsa', email: 'åsa@example.com' }, null, 'line 4'),
        contactRecord({ name: 'Åsa again', email: 'Åsa@EXAMPLE.com' }, null, 'line 5'),
        // The owner's self row holds the owner's email: it is no contact of the network.
        contactRecord({ name: 'Me', email: owner.email }, null, 'line 6'),
        // A record of the stored contact itself is no duplicate of it.
        contactRecord({ title: 'Countess', email: 'ada@example.com' }, stored, 'line 7'),
      ],
      { match: [] },
    );
    expect(outcome).toMatchObject({ created: 5, updated: 1, matchedByEmail: 0 });
    expect(outcome.duplicateEmails).toEqual([
      { label: 'line 2', email: 'ADA@example.COM', sameAs: `contact ${stored}` },
      { label: 'line 5', email: 'Åsa@EXAMPLE.com', sameAs: 'line 3' },
      { label: 'line 7', email: 'ada@example.com', sameAs: 'line 2' },
    ]);
  });

  it('with match, a record without id updates the first listable contact holding its email; an id wins over the email', async () => {
    const { store } = db();
    // Created in the same transaction as Grace, so listed by id after her: an id sorting after every UUIDv7 we make.
    const given = `f${randomUUID().slice(1)}`;
    const outcome = await store.contacts.importContacts(
      owner.id,
      [
        contactRecord({ name: 'Ada Lovelace', email: 'ADA@EXAMPLE.COM' }, null, 'line 2'),
        contactRecord({ name: 'Grace', email: 'grace@navy.example' }, null, 'line 3'),
        contactRecord({ name: 'Grace Hopper', email: 'Grace@navy.example' }, null, 'line 4'),
        contactRecord({ name: 'Ada by id', email: 'ada@example.com' }, given, 'line 5'),
      ],
      { match: ['email'] },
    );
    expect(outcome).toMatchObject({ created: 2, updated: 2, matchedByEmail: 2 });
    expect(outcome.duplicateEmails).toEqual([{ label: 'line 5', email: 'ada@example.com', sameAs: `contact ${stored}` }]);
    expect(await names()).toEqual([
      ['Ada Lovelace', 'ADA@EXAMPLE.COM'],
      ['Grace Hopper', 'Grace@navy.example'],
      ['Ada by id', 'ada@example.com'],
    ]);
    expect((await store.contacts.get(owner.id, stored))!.contact.name).toBe('Ada Lovelace');
  });

  it('with match, a contact the import moves to another email no longer holds the old one', async () => {
    const outcome = await db().store.contacts.importContacts(
      owner.id,
      [
        contactRecord({ email: 'countess@example.com' }, stored, 'line 2'),
        contactRecord({ name: 'New Ada', email: 'ada@example.com' }, null, 'line 3'),
      ],
      { match: ['email'] },
    );
    expect(outcome).toMatchObject({ created: 1, updated: 1, matchedByEmail: 0, duplicateEmails: [] });
    expect(await names()).toEqual([
      ['Ada', 'countess@example.com'],
      ['New Ada', 'ada@example.com'],
    ]);
  });

  it('with match, a refused record leaves everything as it was', async () => {
    const { store } = db();
    const before = await names();
    const theirs = randomUUID();
    await store.contacts.importContacts((await createUser(store)).id, [contactRecord({ name: 'Theirs' }, theirs)]);
    const records = [
      contactRecord({ name: 'Changed', email: 'ada@example.com' }, null, 'line 2'),
      contactRecord({ name: 'X' }, theirs, 'line 3'),
    ];
    await expect(store.contacts.importContacts(owner.id, records, { match: ['email'] })).rejects.toThrow(
      `line 3: id ${theirs} is not one of this user's importable contacts`,
    );
    expect(await names()).toEqual(before);
  });
});

describeEachBackend('Store contract: the LinkedIn URLs an import names, and where its contacts came from', (db) => {
  const LINKEDIN: RecordOrigin = { source: 'linkedin', matchOn: ['linkedin_url'] };
  const fromLinkedin = (record: ImportRecord): ImportRecord => ({ ...record, origin: LINKEDIN });
  let owner: User;
  let stored: string;
  let merged: string;
  beforeEach(async () => {
    const { store } = db();
    owner = await createUser(store);
    [stored, merged] = [randomUUID(), randomUUID()];
    await store.contacts.importContacts(owner.id, [
      contactRecord({ name: 'Ada', linkedin_url: 'https://www.linkedin.com/in/Ada-L/', created_at: '2024-01-01T00:00:00.000Z' }, stored),
      contactRecord({ name: 'Ada (old)', linkedin_url: 'linkedin.com/in/ada-l' }, merged),
      merging(merged, stored),
    ]);
    // Another owner's contact with the same profile is never this owner's concern.
    await store.contacts.importContacts((await createUser(store)).id, [contactRecord({ linkedin_url: 'http://linkedin.com/in/ada-l' })]);
  });
  const contacts = async () =>
    (await db().store.contacts.listPage(owner.id, { limit: 100, offset: 0 })).contacts.map((c) => [c.name, c.linkedin_url, c.source]);

  it('with linkedin_url, a record without id updates the listable contact with the same URL, scheme, www., case, query and slash ignored', async () => {
    const outcome = await db().store.contacts.importContacts(
      owner.id,
      [
        contactRecord({ name: 'Ada Lovelace', linkedin_url: 'http://linkedin.com/in/ada-l?trk=x' }, null, 'line 2'),
        contactRecord({ name: 'Grace', linkedin_url: 'https://www.linkedin.com/in/grace-h' }, null, 'line 3'),
        // Made by the record before, in the same import.
        contactRecord({ name: 'Grace Hopper', linkedin_url: 'linkedin.com/in/GRACE-H/' }, null, 'line 4'),
        contactRecord({ name: 'Alan', linkedin_url: 'https://uk.linkedin.com/in/ada-l' }, null, 'line 5'),
      ],
      { match: ['linkedin_url'] },
    );
    expect(outcome).toMatchObject({ created: 2, updated: 2, matchedByEmail: 0, matchedByLinkedinUrl: 2 });
    expect(await contacts()).toEqual([
      ['Ada Lovelace', 'http://linkedin.com/in/ada-l?trk=x', null],
      ['Grace Hopper', 'linkedin.com/in/GRACE-H/', null],
      ['Alan', 'https://uk.linkedin.com/in/ada-l', null],
    ]);
  });

  it('a LinkedIn export’s records match on linkedin_url by default; match [] or email alone, or the bulk path, turns that off', async () => {
    const { store } = db();
    const record = () => fromLinkedin(contactRecord({ name: 'Ada L', linkedin_url: 'https://linkedin.com/in/ada-l' }, null, 'line 5'));
    expect(await store.contacts.importContacts(owner.id, [record()], { match: ['email'] })).toMatchObject({
      created: 1,
      matchedByLinkedinUrl: 0,
    });
    expect(await store.contacts.importContacts(owner.id, [record()], { match: [] })).toMatchObject({ created: 1, matchedByLinkedinUrl: 0 });
    expect(await store.contacts.importContacts(owner.id, [record()])).toMatchObject({ created: 1, matchedByLinkedinUrl: 0 });
    // Three contacts hold the URL now; the first in list order is the one updated.
    expect(await store.contacts.importContacts(owner.id, [record()], {})).toMatchObject({
      created: 0,
      updated: 1,
      matchedByLinkedinUrl: 1,
    });
    expect((await store.contacts.get(owner.id, stored))!.contact.name).toBe('Ada L');
  });

  it('a record matching on both takes the contact with its LinkedIn URL, and reports its email held by another', async () => {
    const { store } = db();
    const other = randomUUID();
    await store.contacts.importContacts(owner.id, [contactRecord({ name: 'Ada by email', email: 'ada@example.com' }, other)]);
    const outcome = await store.contacts.importContacts(
      owner.id,
      [contactRecord({ name: 'Ada', email: 'ADA@example.com', linkedin_url: 'https://www.linkedin.com/in/ada-l' }, null, 'line 2')],
      { match: ['email', 'linkedin_url'] },
    );
    expect(outcome).toMatchObject({ created: 0, updated: 1, matchedByEmail: 0, matchedByLinkedinUrl: 1 });
    expect(outcome.duplicateEmails).toEqual([{ label: 'line 2', email: 'ADA@example.com', sameAs: `contact ${other}` }]);
    // Without a URL it holds, the email decides.
    const byEmail = await store.contacts.importContacts(
      owner.id,
      [
        contactRecord(
          { title: 'Countess', email: 'ada@EXAMPLE.com', linkedin_url: 'https://linkedin.com/in/someone-else' },
          null,
          'line 3',
        ),
      ],
      { match: ['email', 'linkedin_url'] },
    );
    expect(byEmail).toMatchObject({ created: 0, updated: 1, matchedByEmail: 1, matchedByLinkedinUrl: 0 });
  });

  it('a contact an export creates gets its source unless the record names one; an update leaves the source', async () => {
    const { store } = db();
    const google: RecordOrigin = { source: 'google', matchOn: [] };
    const named = randomUUID();
    await store.contacts.importContacts(
      owner.id,
      [
        { ...contactRecord({ name: 'From Google' }), origin: google },
        { ...contactRecord({ name: 'Named', source: 'manual' }, named), origin: google },
        fromLinkedin(contactRecord({ name: 'Ada, matched', linkedin_url: 'https://linkedin.com/in/ada-l' })),
        { ...contactRecord({ name: 'Named, by id' }, named), origin: google },
      ],
      {},
    );
    expect(await contacts()).toEqual([
      ['Ada, matched', 'https://linkedin.com/in/ada-l', null],
      ['From Google', null, 'google'],
      ['Named, by id', null, 'manual'],
    ]);
  });
});

describeEachBackend('Store contract: merge', (db) => {
  let owner: User;
  let ids: string[];
  beforeEach(async () => {
    const { store } = db();
    owner = await createUser(store);
    ids = [randomUUID(), randomUUID(), randomUUID(), randomUUID()];
    await store.contacts.importContacts(
      owner.id,
      ids.map((id, index) => contactRecord({ name: `N${index}`, created_at: `2024-01-0${index + 1}T00:00:00.000Z` }, id)),
    );
  });

  it('hides the duplicate, leads its id to the survivor, and moves earlier duplicates along so chains stay one step', async () => {
    const { store } = db();
    const [a, b, c] = ids as [string, string, string];
    await store.contacts.merge(owner.id, a, b);
    await store.contacts.merge(owner.id, b.toUpperCase(), c);
    expect((await listing(store, owner.id)).contacts.map(([id]) => id)).toEqual([c, ids[3]]);
    expect(await store.contacts.get(owner.id, a)).toMatchObject({ contact: { id: c }, mergedFrom: a });
    expect(await store.contacts.get(owner.id, b)).toMatchObject({ contact: { id: c }, mergedFrom: b });
    expect(await store.contacts.get(owner.id, c)).toMatchObject({ contact: { id: c }, mergedFrom: null });
  });

  describe('refusals, each leaving the contacts unchanged', () => {
    it('repeating a merge', async () => {
      const { store } = db();
      const [a, b] = ids as [string, string];
      await store.contacts.merge(owner.id, a, b);
      await expectRefusedUnchanged(
        store,
        owner.id,
        () => store.contacts.merge(owner.id, a, b),
        `Contact ${a} is already merged into ${b} and cannot be merged`,
      );
    });

    it('into itself, in any case', async () => {
      const { store } = db();
      const [a] = ids as [string];
      await expectRefusedUnchanged(
        store,
        owner.id,
        () => store.contacts.merge(owner.id, a, a.toUpperCase()),
        'A contact cannot be merged into itself',
      );
    });

    it('into a merged contact', async () => {
      const { store } = db();
      const [a, b, c] = ids as [string, string, string];
      await store.contacts.merge(owner.id, b, c);
      await expectRefusedUnchanged(
        store,
        owner.id,
        () => store.contacts.merge(owner.id, a, b),
        `Contact ${b} is already merged into ${c} and cannot be merged into`,
      );
    });

    it("into another owner's contact, or another owner's contact into mine", async () => {
      const { store } = db();
      const stranger = await createUser(store);
      const theirs = randomUUID();
      await store.contacts.importContacts(stranger.id, [contactRecord({ name: 'Theirs' }, theirs)]);
      const [a] = ids as [string];
      await expectRefusedUnchanged(
        store,
        owner.id,
        () => store.contacts.merge(owner.id, a, theirs),
        `Contact ${theirs} is not one of this user's contacts`,
        NotFoundError,
      );
      await expectRefusedUnchanged(
        store,
        owner.id,
        () => store.contacts.merge(owner.id, theirs, a),
        `Contact ${theirs} is not one of this user's contacts`,
        NotFoundError,
      );
      expect(await listing(store, stranger.id)).toEqual({ total: 1, contacts: [[theirs, 'Theirs']] });
    });

    it('the self row, either way', async () => {
      const { store, databaseUrl } = db();
      const self = await selfContactId(databaseUrl, owner.id);
      const [a] = ids as [string];
      await expectRefusedUnchanged(
        store,
        owner.id,
        () => store.contacts.merge(owner.id, self, a),
        `Contact ${self} is the user's own self contact and cannot be merged`,
      );
      await expectRefusedUnchanged(
        store,
        owner.id,
        () => store.contacts.merge(owner.id, a, self),
        `Contact ${self} is the user's own self contact and cannot be merged into`,
      );
    });

    it('unknown and malformed ids', async () => {
      const { store } = db();
      const [a] = ids as [string];
      for (const id of [randomUUID(), 'not-a-uuid']) {
        await expectRefusedUnchanged(
          store,
          owner.id,
          () => store.contacts.merge(owner.id, a, id),
          `Contact ${id} is not one of this user's contacts`,
          NotFoundError,
        );
        await expectRefusedUnchanged(
          store,
          owner.id,
          () => store.contacts.merge(owner.id, id, a),
          `Contact ${id} is not one of this user's contacts`,
          NotFoundError,
        );
      }
    });
  });
});
