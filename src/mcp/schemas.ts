import * as z from 'zod';
import { LIMIT_DEFAULT, LIMIT_MAX, LIMIT_MIN, OFFSET_DEFAULT, OFFSET_MAX, OFFSET_MIN } from '../domain/pagination.js';
import { SEARCH_LIMIT_DEFAULT, SEARCH_LIMIT_MAX, SEARCH_LIMIT_MIN, SEARCH_QUERY_MAX_LENGTH, SEARCH_QUERY_MAX_WORDS } from '../domain/search.js';

/*
 * The tools' input and output schemas. The output shapes are the REST API's (ContactSchema, PaginationSchema);
 * test/mcp checks the listed JSON Schemas against them, so the two cannot drift apart.
 */

/** An integer within bounds, with one message for every way to miss them. */
function boundedInteger(name: string, min: number, max: number, fallback: number, description: string) {
  const error = `"${name}" must be an integer from ${min} to ${max}`;
  return z.number({ error }).int({ error }).min(min, { error }).max(max, { error }).default(fallback).describe(description);
}

const text = z.string().nullable();
const dateTime = z.string().describe('ISO 8601 date-time, UTC with milliseconds.');
const freeForm = z.record(z.string(), z.unknown());

export const ContactOutput = z
  .object({
    id: z.string().describe('Stable identifier (a UUID); get_contact takes it.'),
    name: text,
    email: text,
    phone: text,
    company: text,
    title: text,
    school: text,
    linkedin_url: text,
    location: text,
    description: text,
    tags: z.array(z.string()).nullable(),
    enrichment: freeForm.nullable().describe('Free-form object.'),
    enriched_at: dateTime.nullable(),
    source: text,
    birthday: text,
    created_at: dateTime,
    updated_at: dateTime,
    research_data: freeForm.optional().describe('Present only when set.'),
    researched_at: dateTime.optional().describe('Present only when set.'),
  })
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
  merged_from: z
    .string()
    .nullable()
    .describe('The id asked for when it belonged to a duplicate merged into this contact; null otherwise.'),
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
