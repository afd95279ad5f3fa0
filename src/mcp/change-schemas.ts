import * as z from 'zod';
import { makeJsonSchemasOnce } from './json-schema-once.js';
import { CHANGES_LIMIT_MAX, CHANGES_LIMIT_MIN, SINCE_BEGINNING } from '../domain/changes.js';
import { boundedInteger, ContactOutput, FieldsInput, TRUNCATED } from './schemas.js';

/*
 * list_changes' input and output, written like the other tools' (schemas.ts): a nullable value is `anyOf` of two
 * single types, each described.
 */

/** Fewer than the REST feed's 100: a page of compact contacts then fits the result budget, rather than being cut. */
export const LIST_CHANGES_LIMIT_DEFAULT = 50;
/** A signed token is at most 530 characters (domain/changes.ts: an 8-character key id, 500 of payload, the signature). */
const SINCE_MAX_LENGTH = 600;

export const ListChangesInput = z.strictObject({
  since: z
    .string({ error: '"since" must be a string: "0", a next_since token, or an ISO 8601 time' })
    .min(1, { error: '"since" must not be empty: pass "0", a next_since token, or an ISO 8601 time' })
    .max(SINCE_MAX_LENGTH, { error: `"since" must be at most ${SINCE_MAX_LENGTH} characters` })
    .describe(
      `Where to start. "${SINCE_BEGINNING}": every contact (as new or updated), then the changes made meanwhile. ` +
        'A next_since from a previous answer: the changes after it. An ISO 8601 time with a zone ' +
        '("2026-11-21T00:00:00Z" for "since 21 November"): the changes made at or after it, within the days the ' +
        'change log keeps.',
    ),
  limit: boundedInteger('limit', CHANGES_LIMIT_MIN, CHANGES_LIMIT_MAX, LIST_CHANGES_LIMIT_DEFAULT, 'Most changes to return.'),
  fields: FieldsInput,
});

const nullableText = (value: string, whole: string) => z.string().describe(value).nullable().describe(whole);

const ChangeOutput = z
  .object({
    type: z
      .enum(['upsert', 'merge', 'delete'])
      .describe('upsert: new or updated (contact holds it now); merge: a duplicate merged into merged_into; delete: deleted.'),
    id: z.string().describe('The contact’s id.'),
    name: nullableText('A name.', 'The contact’s name; for a merge or a deletion, the name it had.'),
    changed_at: z.string().describe('When it changed: ISO 8601 UTC with milliseconds.'),
    merged_into: z.string().optional().describe('Merges only: the id of the contact it was merged into.'),
    merged_into_name: nullableText('A name.', 'Merges only: the name of the contact it was merged into.').optional(),
    contact: ContactOutput.optional().describe('Upserts only: the contact as it is now, with the fields asked for.'),
  })
  .describe('A change, oldest first; several changes to one contact come as one, its latest.');

export const ListChangesOutput = z.object({
  since: z.string().describe('The since answered (a time as ISO 8601 UTC with milliseconds).'),
  data: z.array(ChangeOutput),
  next_since: z.string().describe('Pass it as since to get the changes after these: now if has_more, or later.'),
  has_more: z.boolean().describe('More changes wait now: call again with next_since.'),
  truncated: TRUNCATED,
});

makeJsonSchemasOnce(ListChangesInput, ListChangesOutput);
