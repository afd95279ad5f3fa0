import { readFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { readCsvRecords } from '../../src/import/formats/csv.js';
import { readJsonRecords } from '../../src/import/formats/json.js';
import { readNdjsonRecords } from '../../src/import/formats/ndjson.js';
import type { RawRecord } from '../../src/import/formats/raw-record.js';
import { readVcardRecords } from '../../src/import/formats/vcard.js';
import { importFormatOf, readContacts } from '../../src/import/read-contacts.js';
import { PublicError } from '../../src/domain/errors.js';
import { bytesWithin } from '../../src/web/body-size.js';
import type { TextChunks } from '../../src/import/text-chunks.js';
import { readAll, readWhole, readWholeFile } from '../support/read-records.js';
import { BODY_CHUNK, ndjsonContacts, readBody, streamOf } from '../support/contact-bodies.js';

type Reader = (text: TextChunks) => AsyncIterable<RawRecord>;

/** Texts whose every place to be cut is worth a try: CRLF, quoted line breaks, folding, escapes, a syntax error. */
const TEXTS: { name: string; read: Reader; text: string }[] = [
  {
    name: 'JSON',
    read: readJsonRecords,
    text: '[\r\n  {"name": "Ada, \\"the Countess\\" [1815]", "tags": ["a", "b"]},\r\n  {"enrichment": {"x": [1, {"y": "}"}]}},\r\n  {}\r\n]\r\n',
  },
  { name: 'JSON with a syntax error', read: readJsonRecords, text: '[{"name": "Ada"},\n {"name" "Grace"}]' },
  { name: 'NDJSON', read: readNdjsonRecords, text: '{"name": "Ada"}\r\n\r\n{"name": "Grace", "tags": ["x"]}\r\n{"name": "Zoë 🦄"}' },
  {
    name: 'CSV',
    read: readCsvRecords,
    text: 'name;description;tags\r\nAda;"First\r\nprogrammer; ""Notes""";math\r\n\r\n;;\r\n"Alan\rTuring";x;',
  },
  {
    name: 'CSV with a quoted cell never closed',
    read: readCsvRecords,
    text: 'name,description\nAda,first\n\n"Grace,unclosed\nstill open\n',
  },
  { name: 'LinkedIn CSV', read: readCsvRecords, text: readFileSync('test/fixtures/import/linkedin-connections.csv', 'utf8') },
  {
    name: 'vCard',
    read: readVcardRecords,
    text: [
      'BEGIN:VCARD',
      'VERSION:2.1',
      'FN:Ada',
      'NOTE;ENCODING=QUOTED-PRINTABLE;CHARSET=UTF-8:Zo=C3=AB wrote=',
      ' this=0D=0Aand that',
      'TITLE:Mathe',
      ' matician',
      'END:VCARD',
      'BEGIN:VCARD',
      'FN:Grace',
      'END:VCARD',
      '',
    ].join('\r\n'),
  },
];

/** The records, or the message of the error that stopped the reading. */
async function outcome(read: Reader, chunks: readonly string[]): Promise<RawRecord[] | string> {
  return readAll(read, chunks).catch((error: Error) => error.message);
}

/** The text cut at the given places (any numbers: each is taken modulo the length). */
function cut(text: string, places: readonly number[]): string[] {
  const at = [...new Set(places.map((place) => place % (text.length + 1)))].sort((a, b) => a - b);
  return [0, ...at].map((start, i) => text.slice(start, at[i] ?? text.length));
}

describe('reading in chunks', () => {
  for (const { name, read, text } of TEXTS) {
    it(`reads ${name} the same however the text is cut into chunks`, async () => {
      const whole = await outcome(read, [text]);
      await fc.assert(
        fc.asyncProperty(fc.array(fc.nat(), { maxLength: 12 }), async (places) => {
          expect(await outcome(read, cut(text, places))).toEqual(whole);
        }),
        { numRuns: 150 },
      );
      expect(await outcome(read, [...text])).toEqual(whole);
    });
  }

  it('decodes a character whose UTF-8 bytes arrive in different chunks', async () => {
    const bytes = Buffer.from('{"name": "Zoë 🦄 Łukasz"}\n');
    const format = importFormatOf('application/x-ndjson')!;
    async function* oneByteAtATime() {
      for (const byte of bytes) yield Uint8Array.of(byte);
    }

    const file = await readWhole(readContacts(oneByteAtATime(), format, 'the body'));

    expect(file.records).toEqual([{ label: 'line 1', contact: { id: null, values: { name: 'Zoë 🦄 Łukasz' } } }]);
  });
});

describe('a body read as a stream', () => {
  const FIXTURES = ['google-contacts.csv', 'google-contacts-legacy.csv', 'linkedin-connections.csv', 'outlook-contacts.csv'];

  it('gives what the same file gives, for every format, in chunks of any size', async () => {
    for (const name of FIXTURES) {
      const bytes = await readFile(`test/fixtures/import/${name}`);
      const fromFile = await readWholeFile(`test/fixtures/import/${name}`);
      for (const chunkSize of [1, 7, BODY_CHUNK])
        expect(await readWhole(readBody(bytes, 'text/csv', chunkSize)), `${name} in chunks of ${chunkSize}`).toEqual(fromFile);
    }
  });

  it('stops reading at the first byte past the limit, with a 413', async () => {
    const bytes = ndjsonContacts(20_000);
    const { body, sent } = streamOf(bytes);
    const limit = 1024 * 1024;

    const error = await readWhole(readContacts(bytesWithin(body, limit), importFormatOf('application/x-ndjson')!, 'the body')).catch(
      (e: unknown) => e,
    );

    expect(error).toBeInstanceOf(PublicError);
    expect(error).toMatchObject({
      status: 413,
      message: `Request body is too large: at most ${limit} bytes`,
    });
    expect(sent() * BODY_CHUNK).toBeLessThan(limit + 4 * BODY_CHUNK);
  });
});
