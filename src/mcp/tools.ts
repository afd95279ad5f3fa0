import type { CallToolResult, McpServer } from '@modelcontextprotocol/server';
import { paginationOf } from '../domain/pagination.js';
import { explainSearch } from '../domain/search-explanation.js';
import { getContact, listContacts, searchContacts, type ContactReader } from '../operations/contacts.js';
import { CONTACT_CARDS_TOOL_META } from './contact-cards.js';
import { COMPACT_FIELDS, projectContact } from './contact-fields.js';
import { fittingPrefix, RESULT_BUDGET_BYTES, withoutLargestFields } from './result-budget.js';
import {
  GetContactInput,
  GetContactOutput,
  ListContactsInput,
  ListContactsOutput,
  SearchContactsInput,
  SearchContactsOutput,
} from './schemas.js';
import { CONTACT_NOT_FOUND_MESSAGE, contactLine, READ_ONLY, toolError, type ToolRunner } from './tool-results.js';

/** What the tools read and for whom. */
export interface ContactToolsDependencies {
  contacts: ContactReader;
  /**
   * The owner the caller's key resolves to, asked on every tool call: over stdio one process serves a whole
   * session, so a key revoked (or a plan downgraded) meanwhile stops working at the next call. Throws AuthError.
   */
  owner: () => Promise<string>;
  /** Told of an unexpected failure; the caller only sees "Internal server error". */
  onError: (error: unknown) => void;
  /** The link the search and fetch tools give a contact (CONTACT_URL_TEMPLATE). */
  contactUrl: (id: string) => string;
}

/**
 * list_contacts, search_contacts and get_contact, registered in the order tools/list gives them: every read carries the owner from the key, never from arguments.
 * Each result's text holds a summary and the whole result as JSON, for clients that show a model only the text; each
 * stays within RESULT_BUDGET_BYTES and says how to get what it left out.
 */
export function registerContactTools(server: McpServer, deps: Omit<ContactToolsDependencies, 'contactUrl'>, run: ToolRunner): void {
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
      _meta: CONTACT_CARDS_TOOL_META,
    },
    ({ limit, offset, fields }) =>
      run(async (ownerId) => {
        const page = { limit, offset };
        const { contacts, total } = await listContacts(deps.contacts, ownerId, page);
        const projected = contacts.map((contact) => projectContact(contact, fields ?? COMPACT_FIELDS));
        const data = fittingPrefix(projected, RESULT_BUDGET_BYTES);
        const truncated = data.length < projected.length;
        const pagination = truncated
          ? { ...paginationOf(page, data.length, total), nextOffset: offset + data.length }
          : paginationOf(page, data.length, total);
        const heading =
          data.length === 0 && !truncated
            ? `No contacts at offset ${offset} (${total} in all).`
            : `Contacts ${offset + 1}–${offset + data.length} of ${total}` +
              (truncated ? ` (cut from ${projected.length} to fit the size budget)` : '') +
              (pagination.nextOffset === null ? '.' : `; the next page starts at offset ${pagination.nextOffset}.`);
        return result({ data, pagination, truncated }, [heading, ...data.map(contactLine)]);
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
        'it, then the others; ties oldest first. A query without letters or digits finds nothing. Each hit names the ' +
        'fields that matched; `ambiguous` is true when several people match by name equally well: ask the user which ' +
        'one they mean rather than choosing.',
      inputSchema: SearchContactsInput,
      outputSchema: SearchContactsOutput,
      annotations: { title: 'Search contacts', ...READ_ONLY },
      _meta: CONTACT_CARDS_TOOL_META,
    },
    ({ query, limit, fields }) =>
      run(async (ownerId) => {
        // One more than asked when one is asked, so that a single hit can still tell an ambiguous name.
        const searched = await searchContacts(deps.contacts, ownerId, query, Math.max(limit, 2));
        const found = searched.slice(0, limit);
        const { matched, ambiguous } = explainSearch(query, searched);
        const projected = found.map((contact, index) => ({
          ...projectContact(contact, fields ?? COMPACT_FIELDS),
          matched: matched[index]!,
        }));
        const data = fittingPrefix(projected, RESULT_BUDGET_BYTES);
        const omittedIds = found.slice(data.length).map((contact) => contact.id);
        const trimmed = query.trim();
        const heading =
          found.length === 0
            ? `No contacts match "${trimmed}".`
            : `${found.length} contact${found.length === 1 ? '' : 's'} matching "${trimmed}", best first` +
              (omittedIds.length === 0 ? ':' : ` (${omittedIds.length} left out to fit the size budget; get them with get_contact):`);
        const advice = ambiguous ? [`Several people match "${trimmed}" by name equally well: ask the user which one they mean.`] : [];
        return result({ query: trimmed, ambiguous, data, truncated: omittedIds.length > 0, omitted_ids: omittedIds }, [
          heading,
          ...advice,
          ...data.map((hit) => `${contactLine(hit)}, matched ${hit.matched.join(', ')}`),
        ]);
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
      _meta: CONTACT_CARDS_TOOL_META,
    },
    ({ id, fields }) =>
      run(async (ownerId) => {
        const found = await getContact(deps.contacts, ownerId, id);
        if (!found) return toolError(CONTACT_NOT_FOUND_MESSAGE);
        const { contact, mergedFrom } = found;
        const fitted = withoutLargestFields(projectContact(contact, fields ?? COMPACT_FIELDS), RESULT_BUDGET_BYTES, ['id', 'name']);
        const notes = [
          ...(mergedFrom === null ? [] : [`Contact ${mergedFrom} was merged into ${contact.id}; this is that contact.`]),
          ...(fitted.omitted.length === 0
            ? []
            : [`Left out to fit the size budget: ${fitted.omitted.join(', ')}; ask for each alone with fields.`]),
        ];
        return result(
          { contact: fitted.value, merged_from: mergedFrom, truncated: fitted.omitted.length > 0, omitted_fields: fitted.omitted },
          [...notes, contactLine(fitted.value)],
        );
      }),
  );
}

/** The structured result, and as text a summary followed by the same result as JSON. */
function result(structuredContent: Record<string, unknown>, lines: string[]): CallToolResult {
  return {
    structuredContent,
    content: [
      { type: 'text', text: lines.join('\n') },
      { type: 'text', text: JSON.stringify(structuredContent) },
    ],
  };
}
