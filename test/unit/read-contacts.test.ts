import { assertUniqueIds } from '../../src/domain/contact-input.js';
import { describe, expect, it } from 'vitest';
import { useTempFiles } from '../support/temp-files.js';
import { readWholeFile } from '../support/read-records.js';

const writeTemp = useTempFiles();

describe('readContactsFile', () => {
  it('picks the format by extension whatever its case', async () => {
    const path = await writeTemp('CONTACTS.VCF', 'BEGIN:VCARD\r\nVERSION:3.0\r\nFN:Ada Lovelace\r\nEND:VCARD\r\n');

    expect((await readWholeFile(path)).records).toEqual([
      { label: 'card 1 (line 1)', contact: { id: null, values: { name: 'Ada Lovelace' } }, origin: { source: 'vcard', matchOn: [] } },
    ]);
  });

  it('ignores a UTF-8 byte order mark', async () => {
    const path = await writeTemp('bom.csv', '\uFEFFname,email\nAda,ada@example.com\n');

    expect((await readWholeFile(path)).records).toEqual([
      { label: 'line 2', contact: { id: null, values: { name: 'Ada', email: 'ada@example.com' } } },
    ]);
  });

  it('gives no records for an empty file', async () => {
    const path = await writeTemp('empty.json', '');

    expect((await readWholeFile(path)).records).toEqual([]);
  });

  it('refuses an unsupported extension, naming the supported ones', async () => {
    const path = await writeTemp('contacts.xlsx', 'whatever');

    await expect(readWholeFile(path)).rejects.toThrow(
      `cannot import ${path}: the file type must be .json, .ndjson, .jsonl, .csv, .vcf or .vcard`,
    );
  });

  it('refuses a file that does not exist', async () => {
    const path = `${await writeTemp('present.json', '[]')}.missing.json`;

    await expect(readWholeFile(path)).rejects.toThrow(`cannot read ${path}: no such file`);
  });

  it('refuses a file that is not UTF-8', async () => {
    const latin1 = Buffer.from('name\nM\u00fcller\n', 'latin1');
    const path = await writeTemp('latin1.csv', latin1);

    await expect(readWholeFile(path)).rejects.toThrow(`cannot read ${path}: it is not UTF-8 text`);
  });

  it('reads the same id twice, however it is written, as one that an import refuses', async () => {
    const id = '0190f5d2-7c3e-7a10-8b2c-3d4e5f607182';
    const path = await writeTemp(
      'twice.json',
      JSON.stringify([{ id, name: 'Ada' }, { name: 'Grace' }, { id: id.toUpperCase(), name: 'Ada again' }]),
    );

    const { records } = await readWholeFile(path);
    expect(() => assertUniqueIds(records)).toThrow(`record 3: id ${id} already appears at record 1`);
  });

  it('reads the same id twice across vCards as one that an import refuses', async () => {
    const card = (name: string): string =>
      `BEGIN:VCARD\nVERSION:3.0\nFN:${name}\nUID:urn:uuid:6b29fc40-ca47-1067-b31d-00dd010662da\nEND:VCARD\n`;
    const path = await writeTemp('twice.vcf', card('Ada') + card('Ada again'));

    const { records } = await readWholeFile(path);
    expect(() => assertUniqueIds(records)).toThrow(
      'card 2 (line 6): id 6b29fc40-ca47-1067-b31d-00dd010662da already appears at card 1 (line 1)',
    );
  });
});
