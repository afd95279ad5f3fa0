import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { describeEachBackend } from '../support/backends.js';
import { cli, cliJson, writeTempFile } from '../support/cli.js';
import { contactRecord, createUser } from '../support/seed.js';

const ndjson = (rows: object[]) => `${rows.map((row) => JSON.stringify(row)).join('\n')}\n`;

describeEachBackend('contacts-api bulk-import', (db) => {
  const url = () => db().databaseUrl;

  it('creates users and imports contacts of many owners, with soft merges, in one go', async () => {
    const tag = randomUUID().slice(0, 8);
    const [a, b] = [`a-${tag}@bulk.example`, `b-${tag}@bulk.example`];
    const survivor = randomUUID();
    const duplicate = randomUUID();
    const users = writeTempFile('users.ndjson', ndjson([{ email: a, name: 'A', plan: 'pro' }, { email: b }]));
    const contacts = writeTempFile(
      'contacts.ndjson',
      ndjson([
        { owner: a, id: survivor, name: 'Ada', created_at: '2024-01-01T00:00:00Z' },
        { owner: a, id: randomUUID(), name: 'Alan', created_at: '2024-01-02T00:00:00Z' },
        { owner: b, id: randomUUID(), name: 'Bea' },
        { owner: a, id: duplicate, name: 'Ada L.', merged_into: survivor },
      ]),
    );
    expect(await cliJson(url(), 'bulk-import', '--users', users, '--contacts', contacts)).toEqual({ usersCreated: 2, contacts: 4 });
    const owner = (await db().store.users.find(a))!;
    expect(owner.plan).toBe('pro');
    const page = await db().store.contacts.listPage(owner.id, { limit: 10, offset: 0 });
    expect(page.total).toBe(2);
    expect(page.contacts.map((c) => c.name)).toEqual(['Ada', 'Alan']);
    expect((await db().store.contacts.get(owner.id, duplicate))?.contact.id).toBe(survivor);
    const other = (await db().store.users.find(b))!;
    expect(other.plan).toBe('free');
    expect((await db().store.contacts.listPage(other.id, { limit: 10, offset: 0 })).contacts.map((c) => c.name)).toEqual(['Bea']);
    // Running it again (every record has an id) creates no user and changes nothing.
    expect(await cliJson(url(), 'bulk-import', '--users', users, '--contacts', contacts)).toEqual({ usersCreated: 0, contacts: 4 });
    expect((await db().store.contacts.listPage(owner.id, { limit: 10, offset: 0 })).total).toBe(2);
  });

  it('leaves search and totals exactly as contact-by-contact writes would, across batches, updates and merges', async () => {
    const tag = randomUUID().slice(0, 8).replace(/[0-9]/g, 'q');
    const store = db().store;
    // An owner with contacts from before the load, which the load renames and merges.
    const existingOwner = await createUser(store);
    const [kept, merged] = [randomUUID(), randomUUID()];
    await store.contacts.importContacts(existingOwner.id, [
      contactRecord({ name: `Zebulon ${tag}` }, kept),
      contactRecord({ name: `Quincy ${tag}` }, merged),
    ]);
    const owner = `n-${tag}@bulk.example`;
    // More lines than one batch holds (2,000), so batches meet each other's rows.
    const numbered = Array.from({ length: 2_600 }, (_, i) => ({ owner, id: randomUUID(), name: `n${i}${tag} Bulk` }));
    const [renamedLater, duplicate] = [numbered[10]!, numbered[20]!];
    const users = writeTempFile('users.ndjson', ndjson([{ email: owner, plan: 'pro' }]));
    const contacts = writeTempFile(
      'contacts.ndjson',
      ndjson([
        ...numbered,
        { owner, id: renamedLater.id, name: `Renamed${tag}` },
        { owner, id: duplicate.id, merged_into: numbered[2_500]!.id },
        { owner: existingOwner.email, id: kept, name: `Xavier ${tag}` },
        { owner: existingOwner.email, id: merged, merged_into: kept },
        { owner: existingOwner.email, id: randomUUID(), name: `Yolanda ${tag}` },
      ]),
    );
    expect(await cliJson(url(), 'bulk-import', '--users', users, '--contacts', contacts)).toEqual({ usersCreated: 1, contacts: 2_605 });

    const ownerId = (await store.users.find(owner))!.id;
    const names = async (userId: string, query: string) => (await store.contacts.search(userId, query, 50)).map((c) => c.name).sort();
    for (let i = 0; i < numbered.length; i += 97) {
      if (i === 10 || i === 20) continue;
      expect(await names(ownerId, `n${i}${tag}`)).toEqual([`n${i}${tag} Bulk`]);
    }
    expect(await names(ownerId, `n10${tag}`)).toEqual([]);
    expect(await names(ownerId, `renamed${tag}`)).toEqual([`Renamed${tag}`]);
    expect(await names(ownerId, `n20${tag}`)).toEqual([]);
    expect((await store.contacts.listPage(ownerId, { limit: 1, offset: 0 })).total).toBe(2_599);
    expect(await names(existingOwner.id, tag)).toEqual([`Xavier ${tag}`, `Yolanda ${tag}`]);
    expect(await names(existingOwner.id, 'zebulon')).toEqual([]);
    expect((await store.contacts.listPage(existingOwner.id, { limit: 10, offset: 0 })).total).toBe(2);

    // The per-row upkeep is back for every later write.
    await store.contacts.importContacts(ownerId, [contactRecord({ name: `Later${tag}` })]);
    expect(await names(ownerId, `later${tag}`)).toEqual([`Later${tag}`]);
    expect((await store.contacts.listPage(ownerId, { limit: 1, offset: 0 })).total).toBe(2_600);
  });

  it.each([
    [
      'a bad record',
      [
        { owner: 'A', name: 'ok' },
        { owner: 'A', name: 42 },
      ],
      /^error: line 2: field "name" must be a string or null$/,
    ],
    ['a missing owner', [{ owner: 'A', name: 'ok' }, { name: 'orphan' }], /^error: line 2: "owner" must name the contact's user/],
    [
      'an unknown owner',
      [
        { owner: 'A', name: 'ok' },
        { owner: 'nobody@bulk.example', name: 'x' },
      ],
      /^error: line 2: no user with email or id "nobody@bulk.example"$/,
    ],
    [
      'a merge into an unknown contact',
      [{ owner: 'A', id: randomUUID(), name: 'x', merged_into: randomUUID() }],
      /^error: line 1: Contact .* is not one of this user's contacts$/,
    ],
  ])('refuses %s and writes nothing, users included', async (_name, rows, message) => {
    const email = `c-${randomUUID().slice(0, 8)}@bulk.example`;
    const users = writeTempFile('users.ndjson', ndjson([{ email }]));
    const contacts = writeTempFile(
      'contacts.ndjson',
      ndjson(rows.map((row) => ('owner' in row && row.owner === 'A' ? { ...row, owner: email } : row))),
    );
    const result = await cli(url(), 'bulk-import', '--users', users, '--contacts', contacts);
    expect(result.code).toBe(1);
    expect(result.stderr.trim()).toMatch(message);
    expect(await db().store.users.find(email)).toBeNull();
    // The rolled-back load leaves the per-row upkeep of search and totals in place.
    const user = await createUser(db().store);
    await db().store.contacts.importContacts(user.id, [contactRecord({ name: 'Rollbackcheck' })]);
    expect((await db().store.contacts.search(user.id, 'rollbackcheck', 10)).map((c) => c.name)).toEqual(['Rollbackcheck']);
    expect((await db().store.contacts.listPage(user.id, { limit: 1, offset: 0 })).total).toBe(1);
  });
});

describe('contacts-api bulk-import usage', () => {
  it('needs --contacts', async () => {
    const result = await cli('file::memory:', 'bulk-import');
    expect(result.code).not.toBe(0);
    expect(result.stderr).toMatch(/required option '--contacts <file>'/);
  });
});
