import { describe, expect, it } from 'vitest';
import { readVcardRecords } from '../../src/import/formats/vcard.js';
import { useTempFiles } from '../support/temp-files.js';
import { readAll, readWholeFile } from '../support/read-records.js';

/** Every card's origin: a contact it creates gets `source: "vcard"`; a card matches on its UID alone. */
const VCARD = { source: 'vcard', matchOn: [] };

const writeTemp = useTempFiles();

/** As contacts.google.com exports: CRLF, 75-octet folding, item groups, `\,` and `\:` escapes. */
const GOOGLE_EXPORT = [
  'BEGIN:VCARD',
  'VERSION:3.0',
  'FN:Ada Lovelace',
  'N:Lovelace;Ada;;;',
  'EMAIL;TYPE=INTERNET;TYPE=HOME:ada@example.com',
  'EMAIL;TYPE=INTERNET;TYPE=WORK:ada@analytical.example',
  'TEL;TYPE=CELL:+44 20 7946 0018',
  "ADR;TYPE=HOME:;;12 St James's Square;London;;SW1Y 4JH;United Kingdom",
  'ORG:Analytical Engines\\, Ltd.',
  'TITLE:Mathematician\\, Writer',
  'BDAY:1815-12-10',
  'item1.URL:https\\://www.linkedin.com/in/ada-lovelace',
  'item1.X-ABLabel:LinkedIn',
  'NOTE:Wrote the first published algorithm\\, for the Analytical Engine. Tran',
  " slated Menabrea's memoir\\; added the Notes.\\nLikes poetry.",
  'CATEGORIES:myContacts,Mathematicians',
  'END:VCARD',
  'BEGIN:VCARD',
  'VERSION:3.0',
  'N:Hopper;Grace;Brewster;Rear Admiral;',
  'END:VCARD',
  'BEGIN:VCARD',
  'VERSION:3.0',
  'FN:Alan Turing',
  'N:Turing;Alan;;;',
  'item1.EMAIL;TYPE=INTERNET:alan@bletchley.example',
  'item1.X-ABLabel:Other',
  'item2.TEL:+44 1908 640404',
  'item2.X-ABLabel:Bletchley',
  'BDAY:--06-23',
  'PHOTO:https://lh3.googleusercontent.com/contacts/AG6tpzGm0AbCdEfGhIjKlMnOpQrStUvWxYz01234567',
  ' 89abcdefghijklmnop',
  'CATEGORIES:myContacts',
  'END:VCARD',
  '',
].join('\r\n');

/** As Apple Contacts exports: LF, repeated `type=` params with `type=pref`, X-SOCIALPROFILE, `--MMDD`. */
const APPLE_EXPORT = `BEGIN:VCARD
VERSION:3.0
PRODID:-//Apple Inc.//macOS 14.5//EN
N:Appleseed;Johnny;;;
FN:Johnny Appleseed
ORG:Apple Inc.;Hardware Engineering
TITLE:Senior Engineer
EMAIL;type=INTERNET;type=WORK:johnny@apple.example
EMAIL;type=INTERNET;type=HOME;type=pref:johnny.appleseed@example.com
TEL;type=WORK;type=VOICE:+1 408 555 0199
TEL;type=CELL;type=VOICE;type=pref:+1 (408) 555-0123
item1.ADR;type=WORK:;;One Apple Park Way;Cupertino;CA;95014;United States
item1.X-ABADR:us
item2.ADR;type=HOME;type=pref:;;1 Main St;Palo Alto;CA;94301;United States
item2.X-ABADR:us
NOTE:Met at WWDC\\; loves apples.\\nCall after 5pm.
BDAY:--0412
X-SOCIALPROFILE;type=twitter;x-user=jappleseed:http://twitter.com/jappleseed
X-SOCIALPROFILE;type=linkedin;x-user=johnnyappleseed:http://www.linkedin.com/in/johnnyappleseed
PHOTO;ENCODING=b;TYPE=JPEG:/9j/4AAQSkZJRgABAQAASABIAAD/4QBMRXhpZgAATU0AKgAAAAgAAYdpAAQAAAABAAAAGg
 6ABAAMAAAABAAEAAKACAAQAAAABAAAAZKADAAQAAAABAAAAZAAAAAD/7QA4UGhvdG9zaG9wIDMu
UID:8F6C1E0A-3B2D-4C5E-9F70-1A2B3C4D5E6F:ABPerson
X-ABUID:8F6C1E0A-3B2D-4C5E-9F70-1A2B3C4D5E6F:ABPerson
END:VCARD
BEGIN:VCARD
VERSION:3.0
PRODID:-//Apple Inc.//macOS 14.5//EN
N:;;;;
FN:Acme Corporation
ORG:Acme Corporation;
X-ABShowAs:COMPANY
item1.URL;type=pref:https://www.linkedin.com/company/acme
item1.X-ABLabel:_$!<HomePage>!$_
UID:6B29FC40-CA47-1067-B31D-00DD010662DA
END:VCARD
BEGIN:VCARD
VERSION:3.0
N:Curie;Marie;;;
FN:Marie Curie
BDAY;X-APPLE-OMIT-YEAR=1604:1604-11-07
END:VCARD
`;

/** vCard 2.1 as older phones and Outlook write it: bare params, quoted-printable with soft line breaks. */
const VCARD_21 = [
  'BEGIN:VCARD',
  'VERSION:2.1',
  'N;CHARSET=UTF-8;ENCODING=QUOTED-PRINTABLE:M=C3=BCller;J=C3=BCrgen;;;',
  'FN;CHARSET=UTF-8;ENCODING=QUOTED-PRINTABLE:J=C3=BCrgen M=C3=BCller',
  'TEL;WORK;VOICE:+49 30 7654321',
  'TEL;CELL;PREF:+49 170 1234567',
  'EMAIL;INTERNET:juergen@example.de',
  'ORG;CHARSET=ISO-8859-1;ENCODING=QUOTED-PRINTABLE:B=E4ckerei M=FCller;Backstube',
  'TITLE;QUOTED-PRINTABLE;CHARSET=UTF-8:Gesch=C3=A4ftsf=C3=BChrer',
  'ADR;HOME;CHARSET=UTF-8;ENCODING=QUOTED-PRINTABLE:;;Stra=C3=9Fe 1;M=C3=BCnchen;Bayern;80331;Deutschland',
  'NOTE;CHARSET=UTF-8;ENCODING=QUOTED-PRINTABLE:Erste Zeile=0D=0AZweite Zeile: Gr=C3=BC=C3=9Fe an die Fami=',
  'lie M=C3=BCller=',
  ' und Freunde',
  'END:VCARD',
  '',
].join('\r\n');

/** vCard 4.0: PREF=n, quoted TYPE lists, tel: URIs, urn:uuid UIDs; and lower-case names, which are legal. */
const VCARD_40 = `BEGIN:VCARD
VERSION:4.0
UID:urn:uuid:0190F5D2-7C3E-7A10-8B2C-3D4E5F607182
FN:Katherine Johnson
EMAIL;TYPE=work;PREF=2:kjohnson@nasa.example
EMAIL;TYPE=home;PREF=1:katherine@example.com
TEL;VALUE=uri;TYPE="voice,cell";PREF=1:tel:+1-555-555-0100
BDAY:19180826
URL:https://en.wikipedia.org/wiki/Katherine_Johnson
URL:https://www.linkedin.com/in/katherine-johnson
CATEGORIES:NASA,Mathematicians
CATEGORIES:Hidden Figures\\, the book
END:VCARD
begin:vcard
version:4.0
fn:Dorothy Vaughan
Email;Type=Work:dorothy@nasa.example
uid:not-a-uuid-at-all
end:vcard
`;

describe('vCard records', () => {
  it('reads a Google Contacts export: folded lines, groups, escapes, a card with only N', async () => {
    const path = await writeTemp('google.vcf', GOOGLE_EXPORT);

    expect((await readWholeFile(path)).records).toEqual([
      {
        label: 'card 1 (line 1)',
        origin: VCARD,
        contact: {
          id: null,
          values: {
            name: 'Ada Lovelace',
            email: 'ada@example.com',
            phone: '+44 20 7946 0018',
            company: 'Analytical Engines, Ltd.',
            title: 'Mathematician, Writer',
            location: 'London, United Kingdom',
            description:
              'Wrote the first published algorithm, for the Analytical Engine. ' +
              "Translated Menabrea's memoir; added the Notes.\nLikes poetry.",
            birthday: '1815-12-10',
            tags: ['myContacts', 'Mathematicians'],
            linkedin_url: 'https://www.linkedin.com/in/ada-lovelace',
          },
        },
      },
      { label: 'card 2 (line 18)', origin: VCARD, contact: { id: null, values: { name: 'Grace Hopper' } } },
      {
        label: 'card 3 (line 22)',
        origin: VCARD,
        contact: {
          id: null,
          values: {
            name: 'Alan Turing',
            email: 'alan@bletchley.example',
            phone: '+44 1908 640404',
            birthday: '--06-23',
            tags: ['myContacts'],
          },
        },
      },
    ]);
  });

  it('reads an Apple Contacts export: type=pref, X-SOCIALPROFILE, year-less birthdays, UUID UIDs', async () => {
    const path = await writeTemp('apple.vcf', APPLE_EXPORT);

    expect((await readWholeFile(path)).records).toEqual([
      {
        label: 'card 1 (line 1)',
        origin: VCARD,
        contact: {
          id: null,
          values: {
            name: 'Johnny Appleseed',
            email: 'johnny.appleseed@example.com',
            phone: '+1 (408) 555-0123',
            company: 'Apple Inc.',
            title: 'Senior Engineer',
            location: 'Palo Alto, CA, United States',
            description: 'Met at WWDC; loves apples.\nCall after 5pm.',
            birthday: '--04-12',
            linkedin_url: 'http://www.linkedin.com/in/johnnyappleseed',
          },
        },
      },
      {
        label: 'card 2 (line 25)',
        origin: VCARD,
        contact: {
          id: '6b29fc40-ca47-1067-b31d-00dd010662da',
          values: {
            name: 'Acme Corporation',
            company: 'Acme Corporation',
            linkedin_url: 'https://www.linkedin.com/company/acme',
          },
        },
      },
      { label: 'card 3 (line 36)', origin: VCARD, contact: { id: null, values: { name: 'Marie Curie', birthday: '--11-07' } } },
    ]);
  });

  it('reads vCard 2.1 quoted-printable values in UTF-8 and ISO-8859-1, across soft line breaks', async () => {
    expect(await readAll(readVcardRecords, VCARD_21)).toEqual([
      {
        label: 'card 1 (line 1)',
        origin: VCARD,
        fields: {
          name: 'Jürgen Müller',
          email: 'juergen@example.de',
          phone: '+49 170 1234567',
          company: 'Bäckerei Müller',
          title: 'Geschäftsführer',
          location: 'München, Bayern, Deutschland',
          description: 'Erste Zeile\nZweite Zeile: Grüße an die Familie Müller und Freunde',
        },
        notImported: [
          'TEL (a contact keeps one)',
          'ADR street, post office box or postal code (a contact keeps the place)',
          'ORG department (a contact keeps the organization)',
        ],
      },
    ]);
  });

  it('reads vCard 4.0: lowest PREF wins, tel: URIs, urn:uuid ids, several CATEGORIES, any-case names', async () => {
    expect(await readAll(readVcardRecords, VCARD_40)).toEqual([
      {
        label: 'card 1 (line 1)',
        origin: VCARD,
        fields: {
          id: '0190F5D2-7C3E-7A10-8B2C-3D4E5F607182',
          name: 'Katherine Johnson',
          email: 'katherine@example.com',
          phone: '+1-555-555-0100',
          birthday: '1918-08-26',
          tags: ['NASA', 'Mathematicians', 'Hidden Figures, the book'],
          linkedin_url: 'https://www.linkedin.com/in/katherine-johnson',
        },
        notImported: ['EMAIL (a contact keeps one)', 'URL or X-SOCIALPROFILE other than LinkedIn'],
      },
      { label: 'card 2 (line 14)', origin: VCARD, fields: { name: 'Dorothy Vaughan', email: 'dorothy@nasa.example' } },
    ]);
  });

  it('names what Google and Apple exports carry that a contact has no place for, with how many cards carry it', async () => {
    const google = await readWholeFile(await writeTemp('google-left.vcf', GOOGLE_EXPORT));
    const apple = await readWholeFile(await writeTemp('apple-left.vcf', APPLE_EXPORT + GOOGLE_EXPORT));

    expect(google.notImported).toEqual([
      { what: 'EMAIL (a contact keeps one)', records: 1 },
      { what: 'ADR street, post office box or postal code (a contact keeps the place)', records: 1 },
      { what: 'PHOTO', records: 1 },
    ]);
    expect(apple.notImported).toEqual([
      { what: 'PHOTO', records: 2 },
      { what: 'EMAIL (a contact keeps one)', records: 2 },
      { what: 'ADR street, post office box or postal code (a contact keeps the place)', records: 2 },
      { what: 'TEL (a contact keeps one)', records: 1 },
      { what: 'ADR (a contact keeps one)', records: 1 },
      { what: 'ORG department (a contact keeps the organization)', records: 1 },
      { what: 'URL or X-SOCIALPROFILE other than LinkedIn', records: 1 },
    ]);
  });

  it('reads REV as updated_at, in basic or extended ISO 8601, with or without a fraction; other REV text is reported', async () => {
    const card = (rev: string) => `BEGIN:VCARD\nVERSION:4.0\nFN:Someone\nREV:${rev}\nEND:VCARD\n`;
    const updatedAt = async (rev: string) => (await readAll(readVcardRecords, card(rev)))[0]!.fields.updated_at;

    expect(await updatedAt('20240501T093000Z')).toBe('2024-05-01T09:30:00.000Z');
    expect(await updatedAt('20240501T093000.123Z')).toBe('2024-05-01T09:30:00.123Z');
    expect(await updatedAt('2024-05-01T09:30:00.5+02:00')).toBe('2024-05-01T07:30:00.500Z');
    expect(await updatedAt('20240501T093000-0130')).toBe('2024-05-01T11:00:00.000Z');
    expect(await updatedAt('20240501')).toBe('2024-05-01T00:00:00.000Z');
    expect(await readAll(readVcardRecords, card('last Tuesday'))).toEqual([
      { label: 'card 1 (line 1)', origin: VCARD, fields: { name: 'Someone' }, notImported: ['REV (not a date and time)'] },
    ]);
    expect((await readAll(readVcardRecords, card('20241301T000000Z')))[0]!.notImported).toEqual(['REV (not a date and time)']);
  });

  it('keeps a BDAY;VALUE=text as written, even when it looks like a date', async () => {
    const card = 'BEGIN:VCARD\nVERSION:4.0\nFN:Someone\nBDAY;VALUE=text:19900101\nEND:VCARD\n';

    expect((await readAll(readVcardRecords, card))[0]!.fields.birthday).toBe('19900101');
  });

  it('keeps a birthday it does not recognize as written', async () => {
    const card = 'BEGIN:VCARD\nVERSION:4.0\nFN:Someone\nBDAY:circa 1800\nEND:VCARD\n';

    expect(await readAll(readVcardRecords, card)).toEqual([
      { label: 'card 1 (line 1)', origin: VCARD, fields: { name: 'Someone', birthday: 'circa 1800' } },
    ]);
  });

  it('gives no records for an empty file', async () => {
    expect(await readAll(readVcardRecords, '')).toEqual([]);
    expect(await readAll(readVcardRecords, '\r\n\r\n')).toEqual([]);
  });
});

describe('vCard errors', () => {
  it('refuses text that is not a vCard', async () => {
    await expect(readAll(readVcardRecords, 'name,email\nAda,ada@example.com\n')).rejects.toThrow(
      'line 1: expected BEGIN:VCARD, found "name,email"',
    );
  });

  it('refuses a card without END:VCARD', async () => {
    const text = 'BEGIN:VCARD\nFN:Ada\nEND:VCARD\n\nBEGIN:VCARD\nFN:Grace\n';

    await expect(readAll(readVcardRecords, text)).rejects.toThrow('card 2 (line 5): no END:VCARD before the end of the file');
  });

  it('refuses a card that starts before the previous one ends', async () => {
    const text = 'BEGIN:VCARD\nFN:Ada\nBEGIN:VCARD\nFN:Grace\nEND:VCARD\n';

    await expect(readAll(readVcardRecords, text)).rejects.toThrow('card 1 (line 1): no END:VCARD before the BEGIN:VCARD at line 3');
  });

  it('refuses END:VCARD outside a card', async () => {
    await expect(readAll(readVcardRecords, 'BEGIN:VCARD\nFN:Ada\nEND:VCARD\nEND:VCARD\n')).rejects.toThrow(
      'line 4: expected BEGIN:VCARD, found "END:VCARD"',
    );
  });

  it('refuses a line that is not a property, e.g. a continuation that lost its indent', async () => {
    const text = 'BEGIN:VCARD\nFN:Ada\nNOTE:Wrote the first\nalgorithm for the Engine\nEND:VCARD\n';

    await expect(readAll(readVcardRecords, text)).rejects.toThrow(
      'line 4 (card 1): expected a property such as "EMAIL:…", found "algorithm for the Engine"',
    );
  });

  it('refuses an unknown quoted-printable charset', async () => {
    const text = 'BEGIN:VCARD\nVERSION:2.1\nFN;CHARSET=KLINGON;ENCODING=QUOTED-PRINTABLE:Worf\nEND:VCARD\n';

    await expect(readAll(readVcardRecords, text)).rejects.toThrow('line 3 (card 1): unknown CHARSET "KLINGON"');
  });

  it('labels a field the contact rules refuse with its card', async () => {
    const text = `BEGIN:VCARD\nFN:Ada\nEND:VCARD\nBEGIN:VCARD\nFN:Grace\nNOTE:${'x'.repeat(70_000)}\nEND:VCARD\n`;
    const path = await writeTemp('long-note.vcf', text);

    await expect(readWholeFile(path)).rejects.toThrow('card 2 (line 4): field "description" is longer than 65536 characters');
  });
});
