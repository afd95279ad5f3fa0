import * as z from 'zod';
import { CONTACT_FIELDS, type ContactField, type ContactFieldKind } from '../domain/contact.js';
import { LIMIT_DEFAULT, LIMIT_MAX, LIMIT_MIN, OFFSET_DEFAULT, OFFSET_MAX, OFFSET_MIN } from '../domain/pagination.js';
import {
  SEARCH_LIMIT_DEFAULT,
  SEARCH_LIMIT_MAX,
  SEARCH_LIMIT_MIN,
  SEARCH_QUERY_MAX_LENGTH,
  SEARCH_QUERY_MAX_WORDS,
} from '../domain/search.js';

/*
 * The tools' input and output schemas. A contact's output derives from ContactSchema's fields; the pagination shape is
 * the REST API's PaginationSchema, and test/mcp checks the listed JSON Schemas against both.
 */

/** An integer within bounds, with one message for every way to miss them. */
function boundedInteger(name: string, min: number, max: number, fallback: number, description: string) {
  const error = `"${name}" must be an integer from ${min} to ${max}`;
  return z.number({ error }).int({ error }).min(min, { error }).max(max, { error }).default(fallback).describe(description);
}

const VALUE_OF_KIND: Record<ContactFieldKind, () => z.ZodType> = {
  id: () => z.string(),
  text: () => z.string(),
  timestamp: () => z.string(),
  tags: () => z.array(z.string()),
  object: () => z.record(z.string(), z.unknown()),
};

/**
 * A contact field as the tools describe it, from the same field table as ContactSchema. Formats (uuid, date-time) stay
 * out: the SDK validates structuredContent with them, and zod's uuid refuses ids an import may rightly have carried.
 */
function contactFieldOutput({ kind, nullable, optional, description }: ContactField): z.ZodType {
  let value = VALUE_OF_KIND[kind]();
  if (nullable) value = value.nullable();
  if (optional) value = value.optional();
  const said = [kind === 'timestamp' ? 'ISO 8601 date-time, UTC with milliseconds.' : undefined, description].filter(Boolean);
  return said.length === 0 ? value : value.describe(said.join(' '));
}

export const ContactOutput = z
  .object(Object.fromEntries(CONTACT_FIELDS.map((field) => [field.name, contactFieldOutput(field)])))
  .describe('A contact, exactly as GET /api/v1/contacts returns it.');

export const ListContactsInput = z.strictObject({
  limit: boundedInteger('limit', LIMIT_MIN, LIMIT_MAX, LIMIT_DEFAULT, 'Page size.'),
  offset: boundedInteger('offset', OFFSET_MIN, OFFSET_MAX, OFFSET_DEFAULT, 'Number of contacts to skip; pass the previous nextOffset.'),
});

export const ListContactsOutput = z.object({
  data: z.array(ContactOutput),
  pagination: z.object({
    limit: z.number().int().describe('Page size applied.'),
    offset: z.number().int().describe('Number of contacts skipped.'),
    total: z.number().int().describe('Number of listable contacts (merged duplicates and the self contact excluded).'),
    nextOffset: z.number().int().nullable().describe('Offset of the next page, or null when the listing is finished.'),
  }),
});

export const GetContactInput = z.strictObject({
  id: z.string().describe('The contact’s id, as list_contacts or search_contacts return it. An old id of a merged duplicate works too.'),
});

export const GetContactOutput = z.object({
  contact: ContactOutput,
  merged_from: z.string().nullable().describe('The id asked for when it belonged to a duplicate merged into this contact; null otherwise.'),
});

export const SearchContactsInput = z.strictObject({
  query: z
    .string()
    .describe(
      `Words to find, 1 to ${SEARCH_QUERY_MAX_LENGTH} characters once trimmed and at most ${SEARCH_QUERY_MAX_WORDS} words; ` +
        'each must start a word of the name, email, company, title, school, location or a tag (case, accents and ' +
        'punctuation ignored; no operators).',
    ),
  limit: boundedInteger('limit', SEARCH_LIMIT_MIN, SEARCH_LIMIT_MAX, SEARCH_LIMIT_DEFAULT, 'Most contacts to return.'),
});

export const SearchContactsOutput = z.object({
  query: z.string().describe('The query as searched (trimmed).'),
  data: z.array(ContactOutput).describe('Best matches first: name or email equal to the query, then starting with it, then the others.'),
});
