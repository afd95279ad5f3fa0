import type { operations } from './openapi-types.js';

type ListContactsOperation = operations['listContacts'];

/** One page of `GET /api/v1/contacts`: `data` and `pagination`, as the served OpenAPI document describes them. */
export type ContactListResponse = ListContactsOperation['responses'][200]['content']['application/json'];

/** A contact as the API returns it. Every field is present (null when empty); `research_data` and `researched_at` only when set. */
export type Contact = ContactListResponse['data'][number];

/** `limit`, `offset`, `total` and `nextOffset` (null on the last page). */
export type Pagination = ContactListResponse['pagination'];

/** Every error response's body. */
export type ErrorBody = ListContactsOperation['responses'][401]['content']['application/json'];

type ListChangesOperation = operations['listContactChanges'];

/** One answer of `GET /api/v1/contacts/changes`: `data`, `next_since` and `has_more`. */
export type ChangesResponse = ListChangesOperation['responses'][200]['content']['application/json'];

/** An upsert (with `contact`), a merge (with `merged_into`) or a delete. */
export type Change = ChangesResponse['data'][number];
