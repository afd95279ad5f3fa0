import {
  ProtocolError,
  ProtocolErrorCode,
  ResourceNotFoundError,
  ResourceTemplate,
  type ListResourcesResult,
  type McpServer,
  type ReadResourceResult,
  type Resource,
} from '@modelcontextprotocol/server';
import type { Contact } from '../domain/contact.js';
import { publicOutcome } from '../domain/errors.js';
import { canonicalId } from '../domain/ids.js';
import { decodeListingCursor, encodeListingCursor } from '../domain/listing-cursor.js';
import { LIMIT_MAX } from '../domain/pagination.js';
import { readListedAfter, type ChangeLogReader } from '../operations/change-feed.js';
import { getContact, type ContactReader } from '../operations/contacts.js';
import type { FoundContact } from '../store/store.js';
import type { ServiceKeySource } from '../web/service-key.js';
import { MCP_CACHE_HINTS } from './cache-hints.js';
import { clippedName, fittingPrefix, RESULT_BUDGET_BYTES, withoutLargestFields } from './result-budget.js';
import { CONTACT_NOT_FOUND_MESSAGE, contactTitle, roleOf } from './tool-results.js';

export const CONTACT_URI_TEMPLATE = 'contacts://contact/{id}';
const JSON_MIME_TYPE = 'application/json';

/** Contacts a resources/list page holds at most: the REST listing's largest page. */
export const RESOURCE_PAGE_SIZE = LIMIT_MAX;

/** What the contact resources read and for whom. */
export interface ContactResourcesDependencies {
  contacts: ContactReader & ChangeLogReader;
  /** The owner the caller's key resolves to, asked on every request (as the tools ask it). Throws AuthError. */
  owner: () => Promise<string>;
  /** Told of an unexpected failure; the caller only sees "Internal server error". */
  onError: (error: unknown) => void;
  /** Signs and checks the listing's cursors. */
  serviceKey: ServiceKeySource;
  /**
   * The entries of the resources with fixed URIs registered on the same server (such as an MCP Apps page), listed
   * ahead of the contacts on the first page: this module's resources/list replaces McpServer's, which listed them.
   */
  fixedResources?: readonly Resource[];
}

/** `contacts://contact/<id>`: the resource of one contact. */
export function contactUri(id: string): string {
  return `contacts://contact/${encodeURIComponent(id)}`;
}

/**
 * The owner's contacts as resources: the template `contacts://contact/{id}` (resources/read gives the contact's API
 * JSON; a merged duplicate's id gives the contact it was merged into, its URI and `_meta.merged_from` saying so), and
 * resources/list paging through the owner's listing in list order with a signed cursor. A contact that is not the
 * owner's reads as one that does not exist: -32602, the same message.
 *
 * resources/list is this module's handler, not McpServer's: McpServer's (SDK 2.4.0) neither reads the request's cursor
 * nor passes a template's nextCursor on (typescript-sdk issue 2352), so a network would come in one answer however
 * large. It replaces McpServer's: resources with fixed URIs registered on the same server are listed only when given
 * as `fixedResources`.
 */
export function registerContactResources(server: McpServer, deps: ContactResourcesDependencies): void {
  server.registerResource(
    'contact',
    new ResourceTemplate(CONTACT_URI_TEMPLATE, { list: undefined }),
    {
      title: 'Contact',
      description:
        'One contact of your network as JSON, exactly as GET /api/v1/contacts lists it. The id of a duplicate that was ' +
        'merged gives the contact it was merged into: the content then has that contact’s URI and `_meta.merged_from` ' +
        'names the id asked for. A contact larger than 32 KiB leaves out its largest fields, named in `_meta.omitted_fields`.',
      mimeType: JSON_MIME_TYPE,
      cacheHint: MCP_CACHE_HINTS['resources/read'],
    },
    (uri, { id }) => asOwner(deps, async (ownerId) => contactContents(await readContact(deps, ownerId, uri.href, id))),
  );
  server.server.setRequestHandler('resources/list', (request, ctx) =>
    asOwner(deps, async (ownerId) => {
      const page = await listPage(deps, ownerId, request.params?.cursor);
      // Only a 2026-07-28 request carries the envelope; a 2025 answer has no cache fields (the SDK's own hints go
      // on a carrier that this handler cannot reach).
      return ctx.mcpReq.envelope === undefined ? page : { ...page, ...MCP_CACHE_HINTS['resources/list'] };
    }),
  );
  // The listing changes with every import, but no notification says so: 2026-07-28 clients re-list after ttlMs.
  server.server.registerCapabilities({ resources: { listChanged: undefined } });
}

/** The owner's contact that the URI's id names (a merged one's survivor); -32602 for any id that names none. */
async function readContact(
  deps: ContactResourcesDependencies,
  ownerId: string,
  uri: string,
  id: string | string[] | undefined,
): Promise<FoundContact> {
  if (typeof id !== 'string' || canonicalId(id) === null) {
    throw new ResourceNotFoundError(uri, `Not a contact URI: ${uri}; contact URIs are ${CONTACT_URI_TEMPLATE} with a UUID id`);
  }
  const found = await getContact(deps.contacts, ownerId, id);
  if (found === null) throw new ResourceNotFoundError(uri, CONTACT_NOT_FOUND_MESSAGE);
  return found;
}

function contactContents({ contact, mergedFrom }: FoundContact): ReadResourceResult {
  const fitted = withoutLargestFields(contact, RESULT_BUDGET_BYTES, ['id', 'name']);
  const meta = {
    ...(mergedFrom === null ? {} : { merged_from: mergedFrom }),
    ...(fitted.omitted.length === 0 ? {} : { omitted_fields: fitted.omitted }),
  };
  return {
    contents: [
      {
        uri: contactUri(contact.id),
        mimeType: JSON_MIME_TYPE,
        text: JSON.stringify(fitted.value),
        ...(Object.keys(meta).length === 0 ? {} : { _meta: meta }),
      },
    ],
  };
}

/**
 * One page of the owner's listing after the cursor's contact (from the first, after the fixed resources, without one),
 * within the size budget.
 */
async function listPage(deps: ContactResourcesDependencies, ownerId: string, cursor: string | undefined): Promise<ListResourcesResult> {
  const key = deps.serviceKey.current() ?? (await deps.serviceKey.ready());
  const after = cursor === undefined ? null : decodeListingCursor(cursor, ownerId, key);
  const fixed = after === null ? (deps.fixedResources ?? []) : [];
  // One more than a page, so that the last page says it is the last.
  const { contacts } = await readListedAfter(deps.contacts, ownerId, after, RESOURCE_PAGE_SIZE + 1);
  const listed = fittingPrefix(
    contacts.slice(0, RESOURCE_PAGE_SIZE).map((contact) => listingEntry(JSON.parse(contact.json) as Contact)),
    RESULT_BUDGET_BYTES - Buffer.byteLength(JSON.stringify(fixed)),
  );
  const last = contacts[listed.length - 1];
  const more = listed.length < contacts.length && last !== undefined;
  return { resources: [...fixed, ...listed], ...(more ? { nextCursor: encodeListingCursor(last.key, ownerId, key) } : {}) };
}

function listingEntry(contact: Contact): Resource {
  const role = roleOf(contact);
  return {
    uri: contactUri(contact.id),
    name: clippedName(contact.name ?? contact.email ?? contact.id),
    title: clippedName(contactTitle(contact)),
    mimeType: JSON_MIME_TYPE,
    ...(role === '' ? {} : { description: clippedName(role) }),
  };
}

/**
 * Runs a request's work for the key's owner. Failures become JSON-RPC errors with the REST API's public messages:
 * bad input -32602, a refused caller -32600, anything else -32603 (reported to onError).
 */
async function asOwner<T>(
  deps: Pick<ContactResourcesDependencies, 'owner' | 'onError'>,
  work: (ownerId: string) => Promise<T>,
): Promise<T> {
  try {
    return await work(await deps.owner());
  } catch (error) {
    if (error instanceof ProtocolError) throw error;
    const { status, message } = publicOutcome(error);
    if (status >= 500) deps.onError(error);
    const code =
      status >= 500 ? ProtocolErrorCode.InternalError : status === 400 ? ProtocolErrorCode.InvalidParams : ProtocolErrorCode.InvalidRequest;
    throw new ProtocolError(code, message);
  }
}
