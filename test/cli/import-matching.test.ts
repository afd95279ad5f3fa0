import { readFileSync } from 'node:fs';
import { beforeAll, expect, it } from 'vitest';
import type { User } from '../../src/store/store.js';
import { describeEachBackend } from '../support/backends.js';
import { cli, runBin, writeTempFile } from '../support/cli.js';
import { createUser } from '../support/seed.js';

const LINKEDIN = 'test/fixtures/import/linkedin-connections.csv';

/** `contacts import` as a user runs it, a process of its own: what it matches a record to, and the source it gives. */
describeEachBackend('contacts import: LinkedIn URLs and sources, as a process', (db) => {
  const importFile = (user: User, file: string, ...flags: string[]) =>
    runBin({ DATABASE_URL: db().databaseUrl, API_KEY_PREFIX: 'cnt' }, 'contacts', 'import', '--user', user.id, file, ...flags);
  // The same command in this process: the rules past the first process's wiring, at a fraction of the time.
  const importHere = (user: User, file: string, ...flags: string[]) =>
    cli(db().databaseUrl, 'contacts', 'import', '--user', user.id, file, ...flags);
  const contacts = async (user: User) =>
    (await db().store.contacts.listPage(user.id, { limit: 100, offset: 0 })).contacts.map((c) => [c.name, c.email, c.source]);

  let user: User;
  beforeAll(async () => {
    user = await createUser(db().store);
  });

  it('imports the same Connections.csv twice: the second time creates nothing, each connection found by its URL', async () => {
    const first = await importFile(user, LINKEDIN);
    expect(first.stdout.split('\n')[0]).toBe('Imported 2 contacts: 2 created, 0 updated, 0 unchanged');
    const again = await importFile(user, LINKEDIN);
    expect(again).toMatchObject({ code: 0, stderr: '' });
    expect(again.stdout).toBe(
      [
        'Imported 2 contacts: 0 created, 0 updated, 2 unchanged, 2 matched by LinkedIn URL',
        'Not imported, as a contact has no place for them:',
        '  Connected On: on 2 records',
        '',
      ].join('\n'),
    );
    expect(await contacts(user)).toEqual([
      ['Ada Lovelace', 'ada@example.com', 'linkedin'],
      ['Grace Hopper', null, 'linkedin'],
    ]);
  });

  it('finds a connection whose URL is written otherwise: scheme, www., case, query and trailing slash', async () => {
    const changed = readFileSync(LINKEDIN, 'utf8')
      .replace('https://www.linkedin.com/in/grace-hopper', 'http://linkedin.com/in/Grace-Hopper/?trk=people')
      .replace('Rear Admiral', 'Admiral');
    const again = await importHere(user, writeTempFile('Connections.csv', changed), '--json');
    expect(JSON.parse(again.stdout)).toMatchObject({
      created: 0,
      updated: 1,
      unchanged: 1,
      matched_by_email: 0,
      matched_by_linkedin_url: 2,
    });
    expect((await db().store.contacts.listPage(user.id, { limit: 100, offset: 0 })).contacts.map((c) => c.title)).toEqual([
      'Programmer',
      'Admiral',
    ]);
  });

  it('--match names the fields instead: none creates every connection again, email finds only the one that shows it', async () => {
    const other = await createUser(db().store);
    await importHere(other, LINKEDIN);
    const byEmail = await importHere(other, LINKEDIN, '--match-email', '--json');
    expect(JSON.parse(byEmail.stdout)).toMatchObject({ created: 1, unchanged: 1, matched_by_email: 1, matched_by_linkedin_url: 0 });
    const none = await importHere(other, LINKEDIN, '--match', 'none', '--json');
    expect(JSON.parse(none.stdout)).toMatchObject({ created: 2, matched_by_email: 0, matched_by_linkedin_url: 0 });
    const both = await importHere(other, LINKEDIN, '--match', 'email,linkedin_url', '--json');
    expect(JSON.parse(both.stdout)).toMatchObject({ created: 0, matched_by_email: 0, matched_by_linkedin_url: 2 });
    expect(await db().store.contacts.listPage(other.id, { limit: 1, offset: 0 })).toMatchObject({ total: 5 });
  });

  it('refuses a --match it does not know, or given with --match-email, importing nothing', async () => {
    const other = await createUser(db().store);
    const unknown = await importFile(other, LINKEDIN, '--match', 'phone');
    expect(unknown).toMatchObject({
      code: 1,
      stdout: '',
      stderr: 'error: --match must be email, linkedin_url, email,linkedin_url or none; got "phone"\n',
    });
    const both = await importHere(other, LINKEDIN, '--match', 'email', '--match-email');
    expect(both.code).toBe(1);
    expect(both.stderr).toMatch(/^error: option '--match-email' cannot be used with option '--match <fields>'/);
    expect(await contacts(other)).toEqual([]);
  });

  it('gives the contacts of each export the product as their source; a file of ours, none', async () => {
    const other = await createUser(db().store);
    const vcard = writeTempFile('contacts.vcf', 'BEGIN:VCARD\r\nVERSION:3.0\r\nFN:Card Person\r\nEND:VCARD\r\n');
    const ours = writeTempFile('contacts.csv', 'name\nOur Person\n');
    const files = ['google-contacts.csv', 'google-contacts-legacy.csv', 'outlook-contacts.csv'].map(
      (name) => `test/fixtures/import/${name}`,
    );
    for (const file of [...files, vcard, ours]) expect((await importHere(other, file)).code).toBe(0);
    const sources = new Map((await contacts(other)).map(([name, , source]) => [name, source]));
    expect(Object.fromEntries(sources)).toMatchObject({
      'Rear Admiral Grace Brewster Hopper': 'google',
      Babbage: 'google',
      'Grace Hopper': 'google',
      'Dr. Grace Hopper': 'outlook',
      'Card Person': 'vcard',
      'Our Person': null,
    });
  });
});
