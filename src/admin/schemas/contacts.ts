import Type from 'typebox';
import { IMPORTABLE_FIELDS } from '../../domain/contact.js';
import { IMPORT_MATCH_TEXT } from '../../domain/import-matching.js';
import { StringEnum } from '../../domain/schema-helpers.js';
import { CSV_EXPORT_FORMATS } from '../../import/formats/csv.js';
import { orList } from '../../import/or-list.js';
import { IMPORT_MEDIA_TYPES, importFormatOf } from '../../import/read-contacts.js';

const count = (description: string) => Type.Integer({ minimum: 0, description });
const places = (description: string) => Type.Array(Type.String({ examples: ['line 3'] }), { maxItems: 100, description });
const userId = Type.String({ description: 'The user’s id (a UUID).' });
const contactId = (description: string) => Type.String({ description, examples: ['0190b7a4-3c2e-7f00-8000-00000000c0de'] });

/** What became of a body's records: ImportSummary (src/operations/contacts.ts), as `contacts import --json` prints it. */
export const ImportSummarySchema = Type.Object(
  {
    imported: count('Records that name a contact: each created, updated, left unchanged or merged.'),
    created: count('New contacts.'),
    updated: count('Contacts whose fields changed.'),
    unchanged: count('Contacts already as the record has them.'),
    merged: count('Records whose `merged_into` merged them into another contact.'),
    without_id: count('Records without an id: each became a new contact, unless `match` matched it.'),
    matched_by_email: count('Records without an id that updated the contact with the same email (`match=email`).'),
    matched_by_linkedin_url: count(
      'Records without an id that updated the contact with the same LinkedIn URL (`match=linkedin_url`, the default for a LinkedIn export).',
    ),
    skipped_empty: Type.Object(
      { count: count('Records that name no contact (an empty row, `{}`): skipped.'), records: places('Where the first 100 are.') },
      { additionalProperties: false },
    ),
    duplicate_emails: Type.Object(
      {
        count: count('Records imported with an email another contact of the user already has.'),
        records: Type.Array(
          Type.Object(
            {
              record: Type.String({ description: 'Where the record is.', examples: ['line 5'] }),
              email: Type.String({ description: 'Its email, as written.' }),
              same_as: Type.String({ description: 'The record or contact with the same email.', examples: ['line 4'] }),
            },
            { additionalProperties: false },
          ),
          { maxItems: 100, description: 'The first 100.' },
        ),
      },
      { additionalProperties: false },
    ),
    not_imported: Type.Array(
      Type.Object(
        {
          what: Type.String({ description: 'What a contact has no place for.', examples: ['PHOTO'] }),
          records: count('How many records carry it.'),
        },
        { additionalProperties: false },
      ),
      { description: 'What the body carries that no contact field holds (a vCard’s `PHOTO`), most frequent first.' },
    ),
  },
  {
    additionalProperties: false,
    description: 'What the import did with the body’s records, as the CLI’s `contacts import --json` prints it.',
  },
);

export const ImportQuerySchema = Type.Object(
  {
    match: Type.Optional(
      Type.String({
        description:
          `The fields on which a record without an id updates the user’s contact with the same value, if any, instead of becoming a new contact: ${IMPORT_MATCH_TEXT} (the CLI’s \`--match\`). ` +
          'Emails compare ignoring ASCII case; LinkedIn URLs ignoring the scheme, `www.`, ASCII case, the query, the fragment and trailing slashes ' +
          '(`https://www.linkedin.com/in/Ada-L/?trk=x` is `http://linkedin.com/in/ada-l`). A record matching on both takes the LinkedIn URL’s contact. ' +
          'Without it, a LinkedIn Connections.csv matches on `linkedin_url` and any other body on nothing.',
        examples: ['email,linkedin_url'],
      }),
    ),
    match_email: Type.Optional(
      StringEnum(['true', 'false'], {
        description: '`true` is `match=email` (the CLI’s `--match-email`); `false`, as leaving it out. Not with `match`.',
      }),
    ),
  },
  { additionalProperties: false },
);

export const ContactParamsSchema = Type.Object({ id: userId, contactId: contactId('The contact’s id.') }, { additionalProperties: false });

export const MergeContactSchema = Type.Object(
  { into: contactId('The id of the user’s contact that stays: the one in the path is merged into it.') },
  { additionalProperties: false },
);

export const MergedContactSchema = Type.Object(
  {
    merged: contactId('The contact merged away: it leaves listings, and its id leads to `into`.'),
    into: contactId('The contact that stays.'),
  },
  { additionalProperties: false, description: 'The merge done, as the CLI’s `contacts merge --json` prints it.' },
);

const FIELDS = IMPORTABLE_FIELDS.join(', ');

/** The body in each format an import reads, by the format's name (its first media type). */
const FORMAT_BODIES: Record<string, { description: string; examples: unknown[] }> = {
  'application/json': {
    description: `A JSON array of contact objects (fields: ${FIELDS}), the records labelled \`record N\`.`,
    examples: [[{ name: 'Ada Lovelace', email: 'ada@example.com', tags: ['math'] }, { name: 'Grace Hopper' }]],
  },
  'application/x-ndjson': {
    description: `One JSON contact object per line (fields: ${FIELDS}), the records labelled \`line N\`; blank lines are skipped.`,
    examples: ['{"name": "Ada Lovelace", "email": "ada@example.com"}\n{"name": "Grace Hopper"}\n'],
  },
  'text/csv': {
    description:
      `CSV, \`,\`- or \`;\`-separated, the records labelled \`line N\`: a header row of contact fields (${FIELDS}; ` +
      '`tags` `;`-separated), or a ' +
      `${orList(CSV_EXPORT_FORMATS.map(({ name }) => name))} export as it is.`,
    examples: ['name,email,tags\nAda Lovelace,ada@example.com,math;history\n'],
  },
  'text/vcard': {
    description: 'vCards (2.1, 3.0 or 4.0, as Google and Apple Contacts export them), the records labelled `card N (line L)`.',
    examples: ['BEGIN:VCARD\r\nVERSION:3.0\r\nFN:Ada Lovelace\r\nEMAIL:ada@example.com\r\nEND:VCARD\r\n'],
  },
};

/** The body of a media type: its format's, or for an alias (`text/x-vcard`), the same read as its format's name. */
function bodyOf(mediaType: string) {
  const name = importFormatOf(mediaType)!.mediaTypes[0];
  const body = FORMAT_BODIES[name]!;
  return mediaType === name ? body : { description: `Read as \`${name}\`: ${body.description}` };
}

/**
 * The import's body in each media type it takes. Each schema only documents: the body is read as a stream, by the
 * same readers as the CLI's files, and refused naming the record (400) when it is not what is described.
 */
export const IMPORT_BODY = {
  required: true,
  content: Object.fromEntries(IMPORT_MEDIA_TYPES.map((mediaType) => [mediaType, { schema: bodyOf(mediaType) }])),
};
