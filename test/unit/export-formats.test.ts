import { describe, expect, it } from 'vitest';
import type { Contact } from 'contacts-read-api-client';
import { IMPORTABLE_FIELDS } from '../../src/domain/contact.js';
import { EXPORT_FORMATS, type ExportFormatName } from '../../src/export/export-format.js';
import { writeContacts } from '../../src/export/export-contacts.js';
import { fold } from '../../src/export/formats/vcard.js';
import { AWKWARD_CONTACT } from '../support/awkward-contact.js';
import { LISTED_NULLS } from '../support/contact-fixtures.js';
import { useTempFiles } from '../support/temp-files.js';
import { readWholeFile } from '../support/read-records.js';

const writeTemp = useTempFiles();

const FULL: Contact = { id: '0190f5d2-7c3e-7a10-8b2c-3d4e5f607182', ...AWKWARD_CONTACT, tags: [...AWKWARD_CONTACT.tags] };

const SPARSE: Contact = {
  id: '0190f5d2-7c3e-7a10-8b2c-3d4e5f607183',
  ...LISTED_NULLS,
  phone: '+15550100',
  birthday: '--02-29',
  created_at: '2024-01-03T00:00:00.000Z',
  updated_at: '2024-01-03T00:00:00.000Z',
};

async function* each(contacts: Contact[]): AsyncGenerator<Contact> {
  yield* contacts;
}

async function render(format: ExportFormatName, contacts: Contact[]): Promise<string> {
  let text = '';
  await writeContacts(each(contacts), EXPORT_FORMATS[format], (chunk) => void (text += chunk));
  return text;
}

/** The import records `contacts import` would make of the exported text, as field values by id. */
async function importBack(format: ExportFormatName, contacts: Contact[]) {
  const path = await writeTemp(`export-${format}-${contacts.length}.${format}`, await render(format, contacts));
  return (await readWholeFile(path)).records;
}

describe('ndjson and json', () => {
  it('ndjson is one API contact per line; json one array; both parse back to the contacts', async () => {
    const ndjson = await render('ndjson', [FULL, SPARSE]);
    expect(ndjson.split('\n')).toHaveLength(3);
    expect(
      ndjson
        .trimEnd()
        .split('\n')
        .map((line) => JSON.parse(line)),
    ).toEqual([FULL, SPARSE]);
    expect(JSON.parse(await render('json', [FULL, SPARSE]))).toEqual([FULL, SPARSE]);
    expect(await render('json', [])).toBe('[]\n');
    expect(await render('ndjson', [])).toBe('');
  });
});

describe('csv', () => {
  it('has a header of every API field, in the order the import reads them', async () => {
    const [header] = (await render('csv', [])).split('\r\n');
    expect(header!.split(',')).toEqual([...IMPORTABLE_FIELDS]);
    expect([...IMPORTABLE_FIELDS].sort()).toEqual(Object.keys(FULL).sort());
  });

  it('writes null as an empty cell, tags joined with ;, objects as JSON text, quoting what needs it', async () => {
    const [, full, sparse] = (await render('csv', [{ ...FULL, description: 'line one\nline two' }, SPARSE])).split('\r\n');
    expect(full).toBe(
      [
        FULL.id,
        '"Zoë ""Zed"" O’Brien, Jr."',
        'zoe@example.com',
        '+1 (555) 010-9999',
        '"Acme; Inc., ""Intl"""',
        'Head of R&D\\Ops',
        'ETH Zürich',
        'https://www.linkedin.com/in/zoe-obrien',
        '"Zürich, Switzerland"',
        '"line one\nline two"',
        '"friend;a,b;ünïcode"',
        '"{""headline"":""CEO at \\""Acme\\"""",""nested"":{""list"":[1,""two\\nlines""]}}"',
        '2024-05-01T09:30:00.000Z',
        'linkedin',
        '1906-12-09',
        '"{""summary"":""r, with \\""quotes\\""""}"',
        '2024-05-02T07:30:00.500Z',
        '2024-01-02T03:04:05.678Z',
        '2024-06-07T08:09:10.111Z',
      ].join(','),
    );
    expect(sparse).toBe(`${SPARSE.id},,,+15550100,,,,,,,,,,,--02-29,,,2024-01-03T00:00:00.000Z,2024-01-03T00:00:00.000Z`);
  });

  it('round-trips every field through `contacts import`', async () => {
    const [full, sparse] = await importBack('csv', [FULL, SPARSE]);
    const { id, ...values } = FULL;
    expect(full!.contact).toEqual({ id, values });
    expect(sparse!.contact.values).toMatchObject({ phone: '+15550100', birthday: '--02-29', tags: null, research_data: null });
  });

  it('writes a tag list that joining would not give back as a JSON array, so every list round-trips', async () => {
    const lists = [[], ['a;b', 'c'], ['[draft]', 'x'], ['plain', 'list']];
    const contacts = lists.map((tags, index) => ({ ...SPARSE, id: SPARSE.id.replace(/.$/, String(index)), tags }));
    const rows = (await render('csv', contacts)).split('\r\n').slice(1, -1);
    expect(rows.map((row) => row.split(',').slice(10, -8).join(','))).toEqual([
      '[]',
      '"[""a;b"",""c""]"',
      '"[""[draft]"",""x""]"',
      'plain;list',
    ]);
    expect((await importBack('csv', contacts)).map((record) => record.contact.values.tags)).toEqual(lists);
  });
});

describe('vcard', () => {
  it('writes a vCard 4.0 per contact with the properties the import and address books read', async () => {
    const card = (await render('vcf', [FULL])).split('\r\n').join('\n').replace(/\n /g, '');
    expect(card).toBe(
      [
        'BEGIN:VCARD',
        'VERSION:4.0',
        `UID:urn:uuid:${FULL.id}`,
        'FN:Zoë "Zed" O’Brien\\, Jr.',
        'N:Jr.;Zoë "Zed" O’Brien\\,;;;',
        'EMAIL:zoe@example.com',
        'TEL;VALUE=text:+1 (555) 010-9999',
        'ORG:Acme\\; Inc.\\, "Intl"',
        'TITLE:Head of R&D\\\\Ops',
        'ADR:;;;Zürich\\, Switzerland;;;',
        `NOTE:Met at the 2023 offsite.\\nLikes long descriptions: ${'日本語のテキストと絵文字 🎉\\, '.repeat(4)}end.`,
        'BDAY:19061209',
        'CATEGORIES:friend,a\\,b,ünïcode',
        'URL:https://www.linkedin.com/in/zoe-obrien',
        'REV:20240607T080910.111Z',
        'END:VCARD',
        '',
      ].join('\n'),
    );
  });

  it('a phone that is a plain number is a tel: URI; a year-less birthday is --MMDD; other birthdays stay text', async () => {
    const card = await render('vcf', [SPARSE, { ...SPARSE, birthday: 'around 1950' }]);
    expect(card).toContain('\r\nTEL;VALUE=uri:tel:+15550100\r\n');
    expect(card).toContain('\r\nBDAY:--0229\r\n');
    expect(card).toContain('\r\nBDAY;VALUE=text:around 1950\r\n');
    expect(card).toContain('\r\nFN:\r\n');
    expect(card).not.toContain('\r\nN:');
  });

  it('folds lines at 75 octets of UTF-8 without splitting a character', () => {
    const line = `NOTE:${'ab🎉日本'.repeat(30)}`;
    const folded = fold(line);
    const physical = folded.split('\r\n');
    expect(physical.length).toBeGreaterThan(5);
    for (const part of physical) expect(Buffer.byteLength(part)).toBeLessThanOrEqual(75);
    expect(physical.slice(1).every((part) => part.startsWith(' '))).toBe(true);
    expect(folded.replace(/\r\n /g, '')).toBe(line);
    expect(fold('FN:short')).toBe('FN:short');
  });

  it('round-trips the fields vCard carries through `contacts import`', async () => {
    const textBirthday = { ...SPARSE, id: FULL.id.replace('182', '184'), birthday: 'around 1950' };
    const [full, sparse, text] = await importBack('vcf', [FULL, SPARSE, textBirthday]);
    expect(full!.contact).toEqual({
      id: FULL.id,
      values: {
        name: FULL.name,
        email: FULL.email,
        phone: FULL.phone,
        company: FULL.company,
        title: FULL.title,
        location: FULL.location,
        description: FULL.description,
        birthday: FULL.birthday,
        tags: FULL.tags,
        linkedin_url: FULL.linkedin_url,
        updated_at: FULL.updated_at,
      },
    });
    expect(sparse!.contact).toEqual({
      id: SPARSE.id,
      values: { phone: SPARSE.phone, birthday: SPARSE.birthday, updated_at: SPARSE.updated_at },
    });
    expect(text!.contact.values.birthday).toBe('around 1950');
  });
});
