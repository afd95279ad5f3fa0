import { randomUUID } from 'node:crypto';
import { beforeAll, describe, expect, it } from 'vitest';
import type { Contact } from '../../src/domain/contact.js';
import { describeEachBackend } from '../support/backends.js';
import { cli, cliJson, writeTempFile } from '../support/cli.js';

const FIXED_ID = '6f1c2a3b-4d5e-4f60-8a7b-9c0d1e2f3a4b';

/** The JSON summary of an import that created every record, none of them with an id unless told. */
const created = (count: number, notImported: { what: string; records: number }[] = [], withoutId = count) => ({
  imported: count,
  created: count,
  updated: 0,
  unchanged: 0,
  merged: 0,
  without_id: withoutId,
  matched_by_email: 0,
  matched_by_linkedin_url: 0,
  skipped_empty: { count: 0, records: [] },
  duplicate_emails: { count: 0, records: [] },
  not_imported: notImported,
});

describeEachBackend('contacts-api contacts import and merge', (db) => {
  const url = () => db().databaseUrl;
  let sequence = 0;
  const newUser = async () =>
    cliJson(url(), 'users', 'create', '--email', `import-${++sequence}-${Date.now()}@example.com`, '--plan', 'pro');
  const listAll = async (ownerId: string) => {
    const page = await db().store.contacts.listPage(ownerId, { limit: 100, offset: 0 });
    return page;
  };

  describe('import', () => {
    it('imports a JSON array, keeping id, created_at and updated_at', async () => {
      const user = await newUser();
      const file = writeTempFile(
        'contacts.json',
        JSON.stringify([
          {
            id: FIXED_ID.toUpperCase(),
            name: 'Grace Hopper',
            email: 'grace@navy.mil',
            tags: ['navy', 'cobol'],
            enrichment: { rank: 'Rear Admiral' },
            created_at: '2020-01-02T03:04:05.678Z',
            updated_at: '2021-01-01T00:00:00+01:00',
          },
          { name: 'Alan Turing', company: 'Bletchley Park' },
        ]),
      );
      expect(await cliJson(url(), 'contacts', 'import', '--user', user.email, file)).toEqual(created(2, [], 1));
      const { contacts, total } = await listAll(user.id);
      expect(total).toBe(2);
      expect(contacts[0]).toEqual({
        id: FIXED_ID,
        name: 'Grace Hopper',
        email: 'grace@navy.mil',
        phone: null,
        company: null,
        title: null,
        school: null,
        linkedin_url: null,
        location: null,
        description: null,
        tags: ['navy', 'cobol'],
        enrichment: { rank: 'Rear Admiral' },
        enriched_at: null,
        source: null,
        birthday: null,
        created_at: '2020-01-02T03:04:05.678Z',
        updated_at: '2020-12-31T23:00:00.000Z',
      });
      expect(contacts[1]).toMatchObject({ name: 'Alan Turing', company: 'Bletchley Park' });
    });

    it('imports NDJSON, CSV and vCard files', async () => {
      const user = await newUser();
      const ndjson = writeTempFile('c.ndjson', '{"name":"N One"}\n\n{"name":"N Two","tags":["x"]}\n');
      const csv = writeTempFile('c.csv', 'name,email,tags,description\n"C One",c1@example.com,a;b,"multi\nline"\nC Two,,,\n');
      const vcf = writeTempFile(
        'c.vcf',
        [
          'BEGIN:VCARD',
          'VERSION:3.0',
          'FN:V One',
          'N:One;V;;;',
          'EMAIL;TYPE=INTERNET:v1@example.com',
          'ORG:Acme\\, Inc.;R&D',
          'TITLE:Engineer',
          'CATEGORIES:friends,work',
          'END:VCARD',
          '',
        ].join('\r\n'),
      );
      expect(await cliJson(url(), 'contacts', 'import', '--user', user.id, ndjson)).toEqual(created(2));
      expect(await cliJson(url(), 'contacts', 'import', '--user', user.id, csv)).toEqual(created(2));
      expect(await cliJson(url(), 'contacts', 'import', '--user', user.id, vcf)).toEqual(
        created(1, [{ what: 'ORG department (a contact keeps the organization)', records: 1 }]),
      );
      const { contacts } = await listAll(user.id);
      const byName = Object.fromEntries(contacts.map((c) => [c.name, c]));
      expect(Object.keys(byName).sort()).toEqual(['C One', 'C Two', 'N One', 'N Two', 'V One']);
      expect(byName['C One']).toMatchObject({ email: 'c1@example.com', tags: ['a', 'b'], description: 'multi\nline' });
      expect(byName['C Two']).toMatchObject({ email: null, tags: null, description: null });
      expect(byName['N Two']!.tags).toEqual(['x']);
      expect(byName['V One']).toMatchObject({
        email: 'v1@example.com',
        company: 'Acme, Inc.',
        title: 'Engineer',
        tags: ['friends', 'work'],
      });
    });

    it("imports LinkedIn's, Google's and Outlook's CSV exports as they are", async () => {
      const user = await newUser();
      const imported = async (fixture: string) =>
        (await cliJson(url(), 'contacts', 'import', '--user', user.id, `test/fixtures/import/${fixture}`)).created as number;
      expect(await imported('linkedin-connections.csv')).toBe(2);
      expect(await imported('google-contacts.csv')).toBe(3);
      expect(await imported('google-contacts-legacy.csv')).toBe(2);
      expect(await imported('outlook-contacts-semicolon.csv')).toBe(2);
      const { contacts } = await listAll(user.id);
      expect(contacts.map((c) => c.name)).toEqual([
        'Ada Lovelace',
        'Grace Hopper',
        'Ada Lovelace',
        'Rear Admiral Grace Brewster Hopper',
        'Babbage',
        'Ada Lovelace',
        'Grace Hopper',
        'Ada Lovelace',
        'Dr. Grace Hopper',
      ]);
      expect(contacts.at(-2)).toMatchObject({ email: 'ada@example.com', company: 'Analytical Engines', tags: ['Friends', 'Engines'] });
    });

    it('says in words what an import did, and what the file held that a contact has no place for', async () => {
      const user = await newUser();
      const card = (name: string) =>
        `BEGIN:VCARD\r\nVERSION:3.0\r\nFN:${name}\r\nEMAIL:a@example.com\r\nEMAIL:b@example.com\r\nPHOTO:https://example.com/p.jpg\r\nEND:VCARD\r\n`;
      const file = writeTempFile('words.vcf', card('One') + card('Two'));
      const result = await cli(url(), 'contacts', 'import', '--user', user.id, file);
      expect(result.code, result.stderr).toBe(0);
      expect(result.stdout).toBe(
        [
          'Imported 2 contacts: 2 created, 0 updated, 0 unchanged',
          '2 records without an id became new contacts; --match email,linkedin_url updates the contact with the same email or LinkedIn URL instead',
          '1 record with an email another contact already has: card 2 (line 8): a@example.com, as card 1 (line 1)',
          'Not imported, as a contact has no place for them:',
          '  PHOTO: on 2 records',
          '  EMAIL (a contact keeps one): on 2 records',
          '',
        ].join('\n'),
      );
    });

    describe('what became of each record', () => {
      let owner: { id: string; email: string };
      let adaId: string;
      const file = () =>
        writeTempFile(
          'network.csv',
          [
            'name,email,title',
            'Ada Lovelace,ADA@example.com,Countess',
            ',,',
            'Grace,grace@navy.example,',
            'Grace Hopper,Grace@Navy.example,Admiral',
            '',
          ].join('\n'),
        );

      beforeAll(async () => {
        owner = await newUser();
        const seed = writeTempFile('seed.json', JSON.stringify([{ name: 'Ada', email: 'ada@example.com' }]));
        await cliJson(url(), 'contacts', 'import', '--user', owner.id, seed);
        adaId = (await listAll(owner.id)).contacts[0]!.id;
        // Another user's contact with the same email is no concern of this owner's import.
        const stranger = await newUser();
        await cliJson(
          url(),
          'contacts',
          'import',
          '--user',
          stranger.id,
          writeTempFile('s.json', JSON.stringify([{ email: 'grace@navy.example' }])),
        );
      });

      it('says in words which empty records were skipped, which emails another contact has, and that new contacts were made', async () => {
        const result = await cli(url(), 'contacts', 'import', '--user', owner.id, file());
        expect(result.stdout).toBe(
          [
            'Imported 3 contacts: 3 created, 0 updated, 0 unchanged',
            '3 records without an id became new contacts; --match email,linkedin_url updates the contact with the same email or LinkedIn URL instead',
            'Skipped 1 empty record (no contact field): line 3',
            `2 records with an email another contact already has: line 2: ADA@example.com, as contact ${adaId}; line 5: Grace@Navy.example, as line 4`,
            '',
          ].join('\n'),
        );
        await cliJson(url(), 'contacts', 'delete', '--user', owner.id, ...(await listAll(owner.id)).contacts.slice(1).map((c) => c.id));
      });

      it('--match-email says in words how many records matched a contact by email', async () => {
        const result = await cli(url(), 'contacts', 'import', '--user', owner.id, file(), '--match-email');
        expect(result.stdout.split('\n').slice(0, 3)).toEqual([
          'Imported 3 contacts: 1 created, 2 updated, 0 unchanged, 2 matched by email',
          '1 record without an id became a new contact',
          'Skipped 1 empty record (no contact field): line 3',
        ]);
      });

      it('--match-email stays all or nothing', async () => {
        const before = await listAll(owner.id);
        const bad = writeTempFile('bad.csv', 'name,email,created_at\nAda Byron,ada@example.com,\nX,x@example.com,yesterday\n');
        const result = await cli(url(), 'contacts', 'import', '--user', owner.id, bad, '--match-email');
        expect(result).toMatchObject({ code: 1, stdout: '' });
        expect(result.stderr).toMatch(/^error: line 3: field "created_at" must be an ISO 8601 date-time/);
        expect(await listAll(owner.id)).toEqual(before);
      });
    });

    it('re-importing an export is idempotent, and a partial record keeps the other fields', async () => {
      const user = await newUser();
      const id = randomUUID();
      const file = writeTempFile(
        'export.json',
        JSON.stringify([
          { id: id, name: 'Same', company: 'Acme', created_at: '2022-01-01T00:00:00.000Z', updated_at: '2022-01-01T00:00:00.000Z' },
        ]),
      );
      await cliJson(url(), 'contacts', 'import', '--user', user.id, file);
      const first = await listAll(user.id);
      await cliJson(url(), 'contacts', 'import', '--user', user.id, file);
      expect(await listAll(user.id)).toEqual(first);
      const partial = writeTempFile('partial.csv', `id,title\n${id},CTO\n`);
      await cliJson(url(), 'contacts', 'import', '--user', user.id, partial);
      const [updated] = (await listAll(user.id)).contacts;
      expect(updated).toMatchObject({ id: id, name: 'Same', company: 'Acme', title: 'CTO', created_at: '2022-01-01T00:00:00.000Z' });
      expect(Date.parse(updated!.updated_at)).toBeGreaterThan(Date.parse('2022-01-01T00:00:00.000Z'));
    });

    describe('all or nothing', () => {
      let owner: { id: string; email: string };
      let before: { contacts: Contact[]; total: number };

      beforeAll(async () => {
        owner = await newUser();
        await cliJson(
          url(),
          'contacts',
          'import',
          '--user',
          owner.id,
          writeTempFile('seed.json', JSON.stringify([{ id: FIXED_ID.replace(/^6/, '7'), name: 'Kept', email: 'kept@example.com' }])),
        );
        before = await listAll(owner.id);
      });

      const refused: [string, string, string, RegExp][] = [
        [
          'a bad field type in JSON',
          'bad.json',
          JSON.stringify([{ name: 'ok' }, { name: 'ok2' }, { name: 42 }]),
          /^error: record 3: field "name" must be a string or null$/,
        ],
        [
          'an unknown field',
          'bad.json',
          JSON.stringify([{ name: 'ok' }, { nickname: 'x' }]),
          /^error: record 2: unknown field "nickname"$/,
        ],
        [
          'a bad date in NDJSON',
          'bad.ndjson',
          '{"name":"a"}\n{"name":"b","created_at":"yesterday"}\n',
          /^error: line 2: field "created_at" must be an ISO 8601 date-time/,
        ],
        ['broken JSON on a line', 'bad.ndjson', '{"name":"a"}\n{"name":\n', /^error: line 2: /],
        ['a bad id in CSV', 'bad.csv', 'id,name\n,ok\nnot-a-uuid,bad\n', /^error: line 3: field "id" must be a UUID/],
        ['an unknown CSV column', 'bad.csv', 'name,nickname\na,b\n', /^error: line 1: unknown column "nickname"/],
        ['a vCard without END', 'bad.vcf', 'BEGIN:VCARD\r\nVERSION:3.0\r\nFN:x\r\n', /^error: .*line/],
        ['an unsupported file type', 'bad.xlsx', 'x', /^error: cannot import .*bad\.xlsx/],
        [
          'a duplicate id',
          'dup.json',
          JSON.stringify([
            { id: FIXED_ID, name: 'a' },
            { id: FIXED_ID, name: 'b' },
          ]),
          /^error: record 2: id .* already appears at record 1$/,
        ],
      ];

      it.each(refused)('refuses %s with its position and writes nothing', async (_name, fileName, content, message) => {
        const file = writeTempFile(fileName, content);
        const result = await cli(url(), 'contacts', 'import', '--user', owner.id, file, '--json');
        expect(result.code).toBe(1);
        expect(result.stdout).toBe('');
        expect(result.stderr.trim().split('\n')).toHaveLength(1);
        expect(result.stderr.trim()).toMatch(message);
        expect(await listAll(owner.id)).toEqual(before);
      });

      it('refuses an id of another owner at its record and writes nothing of the file', async () => {
        const other = await newUser();
        const theirs = '0b0b0b0b-0b0b-4b0b-8b0b-0b0b0b0b0b0b';
        await cliJson(
          url(),
          'contacts',
          'import',
          '--user',
          other.id,
          writeTempFile('t.json', JSON.stringify([{ id: theirs, name: 'Theirs' }])),
        );
        const file = writeTempFile('steal.json', JSON.stringify([{ name: 'New 1' }, { id: theirs, name: 'Hijack' }]));
        const result = await cli(url(), 'contacts', 'import', '--user', owner.id, file);
        expect(result.code).toBe(1);
        expect(result.stderr).toBe(`error: record 2: id ${theirs} is not one of this user's importable contacts\n`);
        expect(await listAll(owner.id)).toEqual(before);
        expect((await listAll(other.id)).contacts.map((c) => c.name)).toEqual(['Theirs']);
      });

      it('refuses an unknown user', async () => {
        const result = await cli(url(), 'contacts', 'import', '--user', 'ghost@example.com', writeTempFile('x.json', '[]'));
        expect(result).toMatchObject({ code: 1, stderr: 'error: No user with email or id "ghost@example.com"\n' });
      });
    });
  });

  describe('merge', () => {
    let owner: { id: string; email: string };
    let ids: string[];

    beforeAll(async () => {
      owner = await newUser();
      await cliJson(
        url(),
        'contacts',
        'import',
        '--user',
        owner.id,
        writeTempFile('m.json', JSON.stringify(['A', 'B', 'C', 'D'].map((name) => ({ name })))),
      );
      ids = (await listAll(owner.id)).contacts.map((c) => c.id);
    });

    it('prints which contact it merged into which', async () => {
      expect(await cliJson(url(), 'contacts', 'merge', '--user', owner.email, ids[1]!, '--into', ids[0]!)).toEqual({
        merged: ids[1],
        into: ids[0],
      });
      expect((await listAll(owner.id)).total).toBe(3);
    });

    it.each([
      ['into itself', () => [ids[2]!, ids[2]!], /cannot be merged into itself/],
      ['an already merged duplicate', () => [ids[1]!, ids[3]!], /is already merged into/],
      ['into a merged contact', () => [ids[3]!, ids[1]!], /is already merged into/],
      ['an unknown id', () => ['00000000-0000-4000-8000-000000000000', ids[0]!], /is not one of this user's contacts/],
      ['a malformed id', () => ['x', ids[0]!], /Contact x is not one of this user's contacts/],
    ])('refuses merging %s', async (_name, pair, message) => {
      const [duplicate, survivor] = pair() as [string, string];
      const before = await listAll(owner.id);
      const result = await cli(url(), 'contacts', 'merge', '--user', owner.id, duplicate, '--into', survivor);
      expect(result.code).toBe(1);
      expect(result.stderr).toMatch(message);
      expect(await listAll(owner.id)).toEqual(before);
    });

    it('refuses merging across owners, and the self row', async () => {
      const other = await newUser();
      await cliJson(url(), 'contacts', 'import', '--user', other.id, writeTempFile('o.json', JSON.stringify([{ name: 'Other' }])));
      const [theirs] = (await listAll(other.id)).contacts;
      const result = await cli(url(), 'contacts', 'merge', '--user', owner.id, ids[2]!, '--into', theirs!.id);
      expect(result.code).toBe(1);
      expect(result.stderr).toMatch(/is not one of this user's contacts/);
      const reverse = await cli(url(), 'contacts', 'merge', '--user', other.id, theirs!.id, '--into', ids[2]!);
      expect(reverse.stderr).toMatch(/is not one of this user's contacts/);
      expect((await listAll(owner.id)).total).toBe(3);
      expect((await listAll(other.id)).total).toBe(1);
    });
  });

  describe('delete', () => {
    it('prints how many contacts it deleted, and refuses an id that is not the user’s with a non-zero exit', async () => {
      const owner = await newUser();
      await cliJson(
        url(),
        'contacts',
        'import',
        '--user',
        owner.id,
        writeTempFile('d.json', JSON.stringify(['A', 'B'].map((name) => ({ name })))),
      );
      const [a, b] = (await listAll(owner.id)).contacts.map((contact) => contact.id) as [string, string];
      const refused = await cli(url(), 'contacts', 'delete', '--user', owner.email, a, '00000000-0000-4000-8000-000000000000');
      expect(refused).toMatchObject({
        code: 1,
        stderr: "error: Contact 00000000-0000-4000-8000-000000000000 is not one of this user's contacts\n",
      });
      expect(await cliJson(url(), 'contacts', 'delete', '--user', owner.email, a)).toEqual({ deleted: 1 });
      expect((await cli(url(), 'contacts', 'delete', '--user', owner.email, b)).stdout).toBe('Deleted 1 contact\n');
    });
  });
});
