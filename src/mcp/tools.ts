import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import type { CallToolResult, ToolAnnotations } from '@modelcontextprotocol/sdk/types.js';
import type { Contact } from '../domain/contact.js';
import { paginationOf } from '../domain/pagination.js';
import { publicOutcome } from '../domain/errors.js';
import type { ContactStore } from '../store/store.js';
import {
  GetContactInput,
  GetContactOutput,
  ListContactsInput,
  ListContactsOutput,
  SearchContactsInput,
  SearchContactsOutput,
} from './schemas.js';

export const CONTACT_NOT_FOUND_MESSAGE = 'Contact not found';

/** What the tools read and for whom. */
export interface ContactToolsDependencies {
  contacts: ContactStore;
  /**
   * The owner the caller's key resolves to, asked on every tool call: over stdio one process serves a whole
   * session, so a key revoked (or a plan downgraded) meanwhile stops working at the next call. Throws AuthError.
   */
  owner: () => Promise<string>;
  /** Told of an unexpected failure; the caller only sees "Internal server error". */
  onError: (error: unknown) => void;
}

const READ_ONLY: ToolAnnotations = { readOnlyHint: true, idempotentHint: true, openWorldHint: false };

/** list_contacts, get_contact and search_contacts: every read carries the owner from the key, never from arguments. */
export function registerContactTools(server: McpServer, deps: ContactToolsDependencies): void {
  /** Runs a tool for the key's owner; failures become tool errors with the REST API's public messages. */
  const run = async (work: (ownerId: string) => Promise<CallToolResult>): Promise<CallToolResult> => {
    try {
      return await work(await deps.owner());
    } catch (error) {
      const mapped = publicOutcome(error);
      if (mapped.status >= 500) deps.onError(error);
      return toolError(mapped.message);
    }
  };

  server.registerTool(
    'list_contacts',
    {
      title: 'List contacts',
      description:
        'Lists your contacts a page at a time, oldest first (created_at, then id), exactly like GET /api/v1/contacts: ' +
        'merged duplicates and your own contact are excluded. Follow pagination.nextOffset until it is null.',
      inputSchema: ListContactsInput,
      outputSchema: ListContactsOutput,
      annotations: { title: 'List contacts', ...READ_ONLY },
    },
    (page) =>
      run(async (ownerId) => {
        const { contacts, total } = await deps.contacts.listPage(ownerId, page);
        const pagination = paginationOf(page, contacts.length, total);
        const heading =
          contacts.length === 0
            ? `No contacts at offset ${page.offset} (${total} in all).`
            : `Contacts ${page.offset + 1}–${page.offset + contacts.length} of ${total}` +
              (pagination.nextOffset === null ? '.' : `; the next page starts at offset ${pagination.nextOffset}.`);
        return result({ data: contacts, pagination }, [heading, ...contacts.map(contactLine)]);
      }),
  );

  server.registerTool(
    'get_contact',
    {
      title: 'Get a contact',
      description:
        'Fetches one of your contacts by id. An id of a duplicate that was merged returns the contact it was merged ' +
        'into, with merged_from set to the id you asked for.',
      inputSchema: GetContactInput,
      outputSchema: GetContactOutput,
      annotations: { title: 'Get a contact', ...READ_ONLY },
    },
    ({ id }) =>
      run(async (ownerId) => {
        const found = await deps.contacts.get(ownerId, id);
        if (!found) return toolError(CONTACT_NOT_FOUND_MESSAGE);
        const { contact, mergedFrom } = found;
        const note = mergedFrom === null ? [] : [`Contact ${mergedFrom} was merged into ${contact.id}; this is that contact.`];
        return result({ contact, merged_from: mergedFrom }, [...note, contactLine(contact)]);
      }),
  );

  server.registerTool(
    'search_contacts',
    {
      title: 'Search contacts',
      description:
        'Finds your contacts by the words of their name, email, company, title, school, location and tags: each ' +
        'word of the query must start one of them, ignoring case, accents and punctuation ("jo sm" finds John Smith, ' +
        '"gmail" finds Gmail addresses). Best matches first: name or email equal to the query, then starting with ' +
        'it, then the others; ties oldest first. A query without letters or digits finds nothing.',
      inputSchema: SearchContactsInput,
      outputSchema: SearchContactsOutput,
      annotations: { title: 'Search contacts', ...READ_ONLY },
    },
    ({ query, limit }) =>
      run(async (ownerId) => {
        const found = await deps.contacts.search(ownerId, query, limit);
        const trimmed = query.trim();
        const heading =
          found.length === 0
            ? `No contacts match "${trimmed}".`
            : `${found.length} contact${found.length === 1 ? '' : 's'} matching "${trimmed}", best first:`;
        return result({ query: trimmed, data: found }, [heading, ...found.map(contactLine)]);
      }),
  );
}

function result(structuredContent: Record<string, unknown>, lines: string[]): CallToolResult {
  return { structuredContent, content: [{ type: 'text', text: lines.join('\n') }] };
}

function toolError(message: string): CallToolResult {
  return { isError: true, content: [{ type: 'text', text: message }] };
}

/** `Ada Lovelace <ada@example.com> — Analyst, Engines Ltd (id …)`: enough to choose a contact and fetch it. */
function contactLine(contact: Contact): string {
  const role = [contact.title, contact.company].filter((part) => part !== null && part !== '').join(', ');
  return (
    `- ${contact.name ?? '(no name)'}` +
    (contact.email === null ? '' : ` <${contact.email}>`) +
    (role === '' ? '' : ` — ${role}`) +
    ` (id ${contact.id})`
  );
}
