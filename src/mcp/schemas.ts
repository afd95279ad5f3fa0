import * as z from 'zod';
import { makeJsonSchemasOnce } from './json-schema-once.js';
import { CONTACT_FIELDS, type ContactField, type ContactFieldKind } from '../domain/contact.js';
import { LIMIT_DEFAULT, LIMIT_MAX, LIMIT_MIN, OFFSET_DEFAULT, OFFSET_MAX, OFFSET_MIN } from '../domain/pagination.js';
import {
  SEARCH_FIELDS,
  SEARCH_LIMIT_DEFAULT,
  SEARCH_LIMIT_MAX,
  SEARCH_LIMIT_MIN,
  SEARCH_QUERY_MAX_LENGTH,
  SEARCH_QUERY_MAX_WORDS,
} from '../domain/search.js';
import { COMPACT_FIELDS, CONTACT_FIELD_NAMES } from './contact-fields.js';

/*
 * The tools' input and output schemas. A contact's output derives from ContactSchema's fields; the pagination shape is
 * the REST API's PaginationSchema, and test/mcp checks the listed JSON Schemas against both. Output schemas are written
 * for portability (the Inspector's --strict): a nullable value is `anyOf` of two single types, which zod keeps only when
 * the non-null branch carries a description, and a free-form object says `additionalProperties: true`.
 */

/** An integer within bounds, with one message for every way to miss them. */
export function boundedInteger(name: string, min: number, max: number, fallback: number, description: string) {
  const error = `"${name}" must be an integer from ${min} to ${max}`;
  return z.number({ error }).int({ error }).min(min, { error }).max(max, { error }).default(fallback).describe(description);
}

const KIND_DESCRIPTION: Record<ContactFieldKind, string> = {
  id: 'A contact id (UUID).',
  text: 'Text.',
  timestamp: 'ISO 8601 date-time, UTC with milliseconds.',
  tags: 'Tags, in the order given.',
  object: 'A free-form JSON object.',
};

const VALUE_OF_KIND: Record<ContactFieldKind, () => z.ZodType> = {
  id: () => z.string(),
  text: () => z.string(),
  timestamp: () => z.string(),
  tags: () => z.array(z.string()),
  object: () => z.looseObject({}).meta({ additionalProperties: true }),
};

/**
 * A contact field as the tools describe it, from the same field table as ContactSchema; present only when chosen with
 * `fields`. Formats (uuid, date-time) stay out: the SDK validates structuredContent with them, and zod's uuid refuses
 * ids an import may rightly have carried.
 */
function contactFieldOutput({ kind, nullable, description }: ContactField): z.ZodType {
  const value = VALUE_OF_KIND[kind]().describe(description ?? KIND_DESCRIPTION[kind]);
  return (nullable ? value.nullable() : value).optional();
}

export const ContactOutput = z
  .object(Object.fromEntries(CONTACT_FIELDS.map((field) => [field.name, contactFieldOutput(field)])))
  .describe('A contact, as GET /api/v1/contacts returns it, with the fields asked for.');

export const FieldsInput = z
  .array(z.enum(CONTACT_FIELD_NAMES, { error: `each of "fields" must be one of ${CONTACT_FIELD_NAMES.join(', ')}` }))
  .min(1, { error: '"fields" must name at least one field' })
  .max(CONTACT_FIELD_NAMES.length)
  .optional()
  .describe(
    `Contact fields to return (id always comes). Default: every field but enrichment and research_data, which hold ` +
      `large free-form profiles: ${COMPACT_FIELDS.join(', ')}.`,
  );

export const TRUNCATED = z
  .boolean()
  .describe('True when the result was cut to stay within the size budget; the other fields say how to get the rest.');

const ContactId = z
  .guid({ error: '"id" must be a contact id (a UUID)' })
  .describe('The contact’s id, as list_contacts or search_contacts return it. An old id of a merged duplicate works too.');

export const ListContactsInput = z.strictObject({
  limit: boundedInteger('limit', LIMIT_MIN, LIMIT_MAX, LIMIT_DEFAULT, 'Page size.'),
  offset: boundedInteger('offset', OFFSET_MIN, OFFSET_MAX, OFFSET_DEFAULT, 'Number of contacts to skip; pass the previous nextOffset.'),
  fields: FieldsInput,
});

export const ListContactsOutput = z.object({
  data: z.array(ContactOutput),
  pagination: z.object({
    limit: z.number().int().describe('Page size applied.'),
    offset: z.number().int().describe('Number of contacts skipped.'),
    total: z.number().int().describe('Number of listable contacts (merged duplicates and the self contact excluded).'),
    nextOffset: z
      .number()
      .int()
      .describe('Offset of the next page (after a truncated page: of the first contact left out).')
      .nullable()
      .describe('Offset of the next page, or null when the listing is finished.'),
  }),
  truncated: TRUNCATED,
});

export const GetContactInput = z.strictObject({ id: ContactId, fields: FieldsInput });

export const GetContactOutput = z.object({
  contact: ContactOutput,
  merged_from: z
    .string()
    .describe('An id.')
    .nullable()
    .describe('The id asked for when it belonged to a duplicate merged into this contact; null otherwise.'),
  truncated: TRUNCATED,
  omitted_fields: z.array(z.string()).describe('Fields left out to fit the budget, largest first; ask for them alone with `fields`.'),
});

const QUERY_TOO_LONG = `"query" must be at most ${SEARCH_QUERY_MAX_LENGTH} characters`;

export const SearchContactsInput = z.strictObject({
  query: z
    .string()
    .min(1, { error: '"query" must not be empty' })
    .max(SEARCH_QUERY_MAX_LENGTH, { error: (issue) => `${QUERY_TOO_LONG}; got ${String((issue.input as string).length)}` })
    .describe(
      `Words to find, at most ${SEARCH_QUERY_MAX_WORDS}; each must start a word of the name, email, company, title, ` +
        'school, location or a tag (case, accents and punctuation ignored; no operators).',
    ),
  limit: boundedInteger('limit', SEARCH_LIMIT_MIN, SEARCH_LIMIT_MAX, SEARCH_LIMIT_DEFAULT, 'Most contacts to return.'),
  fields: FieldsInput,
});

const SearchHitOutput = ContactOutput.extend({
  matched: z.array(z.enum(SEARCH_FIELDS)).describe('The fields of which some word starts with a word of the query.'),
}).describe('A contact, as GET /api/v1/contacts returns it, with the fields asked for, and the fields that matched.');

export const SearchContactsOutput = z.object({
  query: z.string().describe('The query as searched (trimmed).'),
  ambiguous: z
    .boolean()
    .describe('Several people match by name equally well (e.g. two named John): ask the user which one they mean rather than choosing.'),
  data: z.array(SearchHitOutput).describe('Best matches first: name or email equal to the query, then starting with it, then the others.'),
  truncated: TRUNCATED,
  omitted_ids: z.array(z.string()).describe('Further matches, in order, left out to fit the budget: fetch them with get_contact.'),
});

/** OpenAI's search tool (deep research, company knowledge): one argument, results with id, title and url. */
export const SearchInput = z.strictObject({
  query: SearchContactsInput.shape.query,
});

export const SearchOutput = z.object({
  results: z
    .array(
      z.object({
        id: z.string().describe('The contact id: pass it to fetch.'),
        title: z.string().describe('Name, role and company.'),
        url: z.string().describe('A link to the contact (CONTACT_URL_TEMPLATE).'),
      }),
    )
    .describe('Best matches first.'),
});

/** OpenAI's fetch tool: one document by the id search gave. */
export const FetchInput = z.strictObject({ id: ContactId });

export const FetchOutput = z.object({
  id: z.string().describe('The contact id.'),
  title: z.string().describe('Name, role and company.'),
  text: z.string().describe('Every field of the contact, one per line (enrichment and research data as JSON).'),
  url: z.string().describe('A link to the contact (CONTACT_URL_TEMPLATE).'),
  metadata: z.looseObject({}).meta({ additionalProperties: true }).describe('source, created_at, updated_at and merged_from.'),
});

makeJsonSchemasOnce(
  ListContactsInput,
  ListContactsOutput,
  GetContactInput,
  GetContactOutput,
  SearchContactsInput,
  SearchContactsOutput,
  SearchInput,
  SearchOutput,
  FetchInput,
  FetchOutput,
);
