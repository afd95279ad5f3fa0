import { describe, expect, it } from 'vitest';
import { readCsvRecords } from '../../src/import/formats/csv.js';
import { readJsonRecords } from '../../src/import/formats/json.js';
import { readNdjsonRecords } from '../../src/import/formats/ndjson.js';
import { useTempFiles } from '../support/temp-files.js';
import { readAll, readWholeFile } from '../support/read-records.js';

const writeTemp = useTempFiles();

const ADA_ID = '0190f5d2-7c3e-7a10-8b2c-3d4e5f607182';

describe('JSON', () => {
  it('reads an array of contact objects into normalized records', async () => {
    const path = await writeTemp(
      'contacts.json',
      JSON.stringify([
        {
          id: ADA_ID.toUpperCase(),
          name: '  Ada Lovelace ',
          email: 'ada@example.com',
          tags: ['math', ' history', 'math', ''],
          enrichment: { score: 0.92 },
          research_data: null,
          created_at: '2024-05-01T10:30:00+01:00',
        },
        { name: 'Grace Hopper', company: '', birthday: '1906-12-09' },
      ]),
    );

    expect((await readWholeFile(path)).records).toEqual([
      {
        label: 'record 1',
        contact: {
          id: ADA_ID,
          values: {
            name: 'Ada Lovelace',
            email: 'ada@example.com',
            tags: ['math', 'history'],
            enrichment: { score: 0.92 },
            research_data: null,
            created_at: '2024-05-01T09:30:00.000Z',
          },
        },
      },
      {
        label: 'record 2',
        contact: { id: null, values: { name: 'Grace Hopper', company: null, birthday: '1906-12-09' } },
      },
    ]);
  });

  it('skips a record that names no contact (no id, no value but its timestamps), naming where it was', async () => {
    const path = await writeTemp(
      'empties.json',
      JSON.stringify([{}, { name: 'Ada' }, { name: ' ', tags: [''], created_at: '2024-05-01T00:00:00Z' }, { id: ADA_ID }]),
    );

    expect(await readWholeFile(path)).toEqual({
      records: [
        { label: 'record 2', contact: { id: null, values: { name: 'Ada' } } },
        { label: 'record 4', contact: { id: ADA_ID, values: {} } },
      ],
      skippedEmpty: ['record 1', 'record 3'],
      notImported: [],
    });
  });

  it('gives no records for an empty array or an empty file', async () => {
    expect(await readAll(readJsonRecords, '[]')).toEqual([]);
    expect(await readAll(readJsonRecords, ' \n')).toEqual([]);
  });

  it('labels a field the contact rules refuse with its record', async () => {
    const path = await writeTemp('unknown-field.json', '[{"name": "Ada"}, {"name": "Grace", "foo": 1}]');

    await expect(readWholeFile(path)).rejects.toThrow('record 2: unknown field "foo"');
  });

  it('refuses an element that is not an object', async () => {
    await expect(readAll(readJsonRecords, '[{"name": "Ada"}, "Grace"]')).rejects.toThrow('record 2: expected an object of contact fields');
  });

  it('refuses a top level that is not an array', async () => {
    await expect(readAll(readJsonRecords, '{"name": "Ada"}')).rejects.toThrow('expected a JSON array of contact objects');
  });

  it('names the line and column of a syntax error when the parser gives its position', async () => {
    await expect(readAll(readJsonRecords, '[{"name": "Ada"},\n {"name" "Grace"}]')).rejects.toThrow(
      "invalid JSON at line 2 column 10: Expected ':' after property name",
    );
  });

  it('refuses a syntax error the parser gives no position for', async () => {
    await expect(readAll(readJsonRecords, '[{"name": "Ada"}, {"name": Grace}]')).rejects.toThrow(/^invalid JSON: Unexpected token 'G'/);
  });

  it('names the place of a mistake between elements: a missing or extra comma, text after the array, an array left open', async () => {
    const refusal = async (text: string) =>
      readAll(readJsonRecords, text).then(
        () => 'accepted',
        (error: Error) => error.message,
      );

    expect(await refusal('[{"name": "Ada"},]')).toBe("invalid JSON at line 1 column 18: Unexpected token ']'");
    expect(await refusal('[,{"name": "Ada"}]')).toBe("invalid JSON at line 1 column 2: Unexpected token ','");
    expect(await refusal('[{"name": "Ada"}\n {"name": "Grace"}]')).toBe(
      'invalid JSON at line 2 column 2: Unexpected non-whitespace character after JSON',
    );
    expect(await refusal('[{"name": "Ada"}]\n[]')).toBe('invalid JSON at line 2 column 1: Unexpected non-whitespace character after JSON');
    expect(await refusal('[{"name": "Ada"}')).toBe("invalid JSON at line 1 column 17: Expected ',' or ']' after array element");
    expect(await refusal('[{"name": "Ada"')).toBe("invalid JSON at line 1 column 16: Expected ',' or '}' after property value");
    expect(await refusal('[\n')).toBe('invalid JSON at line 2 column 1: Unexpected end of JSON input');
  });

  it('reads strings holding brackets, commas and escaped quotes whole', async () => {
    const contacts = [{ name: 'Ada, "the Countess" [1815]', description: 'a \\ b ] } {' }, { name: 'Grace' }];

    expect(await readAll(readJsonRecords, JSON.stringify(contacts, null, 2))).toEqual([
      { label: 'record 1', fields: contacts[0] },
      { label: 'record 2', fields: contacts[1] },
    ]);
  });
});

describe('NDJSON', () => {
  it('reads one object per line, skipping blank lines, labelled by line', async () => {
    const text = [
      `{"id": "${ADA_ID}", "name": "Ada Lovelace", "tags": ["math"]}`,
      '',
      '   \r',
      '{"name": "Grace Hopper", "email": null}',
      '',
    ].join('\n');
    const path = await writeTemp('contacts.ndjson', text);

    expect((await readWholeFile(path)).records).toEqual([
      { label: 'line 1', contact: { id: ADA_ID, values: { name: 'Ada Lovelace', tags: ['math'] } } },
      { label: 'line 4', contact: { id: null, values: { name: 'Grace Hopper', email: null } } },
    ]);
  });

  it('reads .jsonl the same way', async () => {
    const path = await writeTemp('contacts.jsonl', '{"name": "Ada Lovelace"}\n');

    expect((await readWholeFile(path)).records).toEqual([{ label: 'line 1', contact: { id: null, values: { name: 'Ada Lovelace' } } }]);
  });

  it('labels a field the contact rules refuse with its line', async () => {
    const path = await writeTemp('bad-email.ndjson', '{"name": "Ada"}\n\n{"name": "Grace", "email": 42}\n');

    await expect(readWholeFile(path)).rejects.toThrow('line 3: field "email" must be a string or null');
  });

  it('names the line and column of a syntax error', async () => {
    await expect(readAll(readNdjsonRecords, '{"name": "Ada"}\n{"name" "Grace"}\n')).rejects.toThrow(
      "line 2: invalid JSON at column 9: Expected ':' after property name",
    );
  });

  it('refuses a line that is not an object', async () => {
    await expect(readAll(readNdjsonRecords, '{"name": "Ada"}\n["Grace"]\n')).rejects.toThrow(
      'line 2: expected an object of contact fields',
    );
  });
});

const CSV_ROWS = [
  'id,name,email,phone,company,tags,description,enrichment,birthday,created_at',
  `${ADA_ID.toUpperCase()},Ada Lovelace,ada@example.com,+44 20 7946 0018,"Analytical Engines, Ltd.",` +
    ' math ; history;;,"First programmer.',
  'Wrote the ""Notes"" on the Engine.","{""score"": 0.92}",1815-12-10,2024-05-01T10:30:00+01:00',
  ',Grace Hopper,grace@navy.example,,,,,,,',
  ',,,,,,,,,',
  ',"Alan',
  'Turing",,,,,,,,',
];

const CSV_RECORDS = [
  {
    label: 'line 2',
    contact: {
      id: ADA_ID,
      values: {
        name: 'Ada Lovelace',
        email: 'ada@example.com',
        phone: '+44 20 7946 0018',
        company: 'Analytical Engines, Ltd.',
        tags: ['math', 'history'],
        description: 'First programmer.\nWrote the "Notes" on the Engine.',
        enrichment: { score: 0.92 },
        birthday: '1815-12-10',
        created_at: '2024-05-01T09:30:00.000Z',
      },
    },
  },
  {
    label: 'line 4',
    contact: {
      id: null,
      values: {
        name: 'Grace Hopper',
        email: 'grace@navy.example',
        phone: null,
        company: null,
        tags: null,
        description: null,
        enrichment: null,
        birthday: null,
      },
    },
  },
  {
    label: 'line 6',
    contact: {
      id: null,
      values: {
        name: 'Alan\nTuring',
        email: null,
        phone: null,
        company: null,
        tags: null,
        description: null,
        enrichment: null,
        birthday: null,
      },
    },
  },
];

describe('CSV', () => {
  it('reads quoted multi-line cells and ;-separated tags, labelling each row by the line it starts on', async () => {
    const path = await writeTemp('contacts.csv', `${CSV_ROWS.join('\n')}\n`);

    expect(await readWholeFile(path)).toEqual({ records: CSV_RECORDS, skippedEmpty: ['line 5'], notImported: [] });
  });

  it('reads CRLF line breaks, also inside quoted cells, the same way', async () => {
    const path = await writeTemp('contacts-crlf.csv', CSV_ROWS.join('\r\n'));

    expect((await readWholeFile(path)).records).toEqual(CSV_RECORDS);
  });

  it('gives no records for an empty file or a header alone', async () => {
    expect(await readAll(readCsvRecords, '')).toEqual([]);
    expect(await readAll(readCsvRecords, 'name,email\n')).toEqual([]);
  });

  it('refuses an unknown column', async () => {
    await expect(readAll(readCsvRecords, 'name,e-mail\nAda,ada@example.com\n')).rejects.toThrow('line 1: unknown column "e-mail"');
  });

  it('refuses a duplicate column', async () => {
    await expect(readAll(readCsvRecords, 'name,email,name\n')).rejects.toThrow('line 1: duplicate column "name"');
  });

  it('refuses a row whose cell count differs from the header', async () => {
    const text = 'name,email\nAda,ada@example.com\n"Grace\nHopper",grace@navy.example,extra\n';

    await expect(readAll(readCsvRecords, text)).rejects.toThrow('line 3: expected 2 cells as in the header, found 3');
  });

  it('refuses a quoted cell that is never closed, naming the line its row starts on', async () => {
    const text = 'name,description\nAda,first\n\n"Grace,unclosed\nstill open\n';

    await expect(readAll(readCsvRecords, text)).rejects.toThrow('line 4: a quoted cell is never closed');
  });

  it('refuses text after a closing quote', async () => {
    await expect(readAll(readCsvRecords, 'name,title\nAda,"Count"ess\n')).rejects.toThrow(
      'line 2: text after a closing quote; double the quotes inside a quoted cell ("")',
    );
  });

  it('ignores spaces around delimiters', async () => {
    expect(await readAll(readCsvRecords, 'name, company ,tags\n Ada , "Analytical Engines, Ltd." , " math; history "\n')).toEqual([
      { label: 'line 2', fields: { name: 'Ada', company: 'Analytical Engines, Ltd.', tags: ['math', 'history'] } },
    ]);
  });

  it('refuses a quote inside an unquoted cell, as in unquoted JSON', async () => {
    await expect(readAll(readCsvRecords, 'name,enrichment\nAda,{"score": 1}\n')).rejects.toThrow(
      'line 2: a quote inside an unquoted cell; quote the whole cell and double the quotes in it ("")',
    );
  });

  it('refuses enrichment that is not JSON', async () => {
    const text = 'name,enrichment\nAda,"{""score"": 1}"\nGrace,{score: 1}\n';

    await expect(readAll(readCsvRecords, text)).rejects.toThrow(/^line 3: column "enrichment" is not valid JSON \(/);
  });

  it('labels a field the contact rules refuse with its line', async () => {
    const path = await writeTemp('bad-id.csv', 'id,name\n,Ada\n"abc",Grace\n');

    await expect(readWholeFile(path)).rejects.toThrow('line 3: field "id" must be a UUID; got "abc"');
  });

  it('leaves a JSON cell that is not an object to the contact rules', async () => {
    const path = await writeTemp('array-enrichment.csv', 'name,research_data\nAda,"[1, 2]"\n');

    await expect(readWholeFile(path)).rejects.toThrow('line 2: field "research_data" must be an object or null');
  });
});
