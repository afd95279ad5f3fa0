import type { CallToolResult, McpServer } from '@modelcontextprotocol/server';
import type { Contact } from '../domain/contact.js';
import { SEARCH_LIMIT_MAX } from '../domain/search.js';
import { getContact, searchContacts, type ContactReader } from '../operations/contacts.js';
import { withoutLargestFields, RESULT_BUDGET_BYTES } from './result-budget.js';
import { FetchInput, FetchOutput, SearchInput, SearchOutput } from './schemas.js';
import { CONTACT_NOT_FOUND_MESSAGE, contactTitle, READ_ONLY, toolError, type ToolRunner } from './tool-results.js';

/** Fields `fetch` puts in `metadata` rather than in the text. */
const METADATA_FIELDS = ['source', 'created_at', 'updated_at'] as const;

/**
 * `search` and `fetch` in the shapes OpenAI documents for ChatGPT's connectors, deep research and company knowledge:
 * their result is one text block holding the JSON (structuredContent too, for MCP clients that read it).
 */
export function registerOpenAiTools(
  server: McpServer,
  deps: { run: ToolRunner; contacts: ContactReader; contactUrl: (id: string) => string },
): void {
  server.registerTool(
    'search',
    {
      title: 'Search contacts (for ChatGPT)',
      description:
        'Finds contacts by the words of their name, email, company, title, school, location and tags (the same search as ' +
        'search_contacts), best first. Returns ids to pass to fetch, with a title and a link for each.',
      inputSchema: SearchInput,
      outputSchema: SearchOutput,
      annotations: { title: 'Search contacts', ...READ_ONLY },
    },
    ({ query }) =>
      deps.run(async (ownerId) => {
        const found = await searchContacts(deps.contacts, ownerId, query, SEARCH_LIMIT_MAX);
        return jsonResult({
          results: found.map((contact) => ({ id: contact.id, title: contactTitle(contact), url: deps.contactUrl(contact.id) })),
        });
      }),
  );

  server.registerTool(
    'fetch',
    {
      title: 'Fetch a contact (for ChatGPT)',
      description: 'Fetches one contact by the id search returned: every field as text, with a title, a link and metadata.',
      inputSchema: FetchInput,
      outputSchema: FetchOutput,
      annotations: { title: 'Fetch a contact', ...READ_ONLY },
    },
    ({ id }) =>
      deps.run(async (ownerId) => {
        const found = await getContact(deps.contacts, ownerId, id);
        if (!found) return toolError(CONTACT_NOT_FOUND_MESSAGE);
        const { contact, mergedFrom } = found;
        const fitted = withoutLargestFields(contact as Record<string, unknown>, RESULT_BUDGET_BYTES, ['id', 'name']);
        const omitted = fitted.omitted.length === 0 ? [] : [`(left out to fit the size budget: ${fitted.omitted.join(', ')})`];
        return jsonResult({
          id: contact.id,
          title: contactTitle(contact),
          text: [...documentLines(fitted.value as Partial<Contact>), ...omitted].join('\n'),
          url: deps.contactUrl(contact.id),
          metadata: { ...Object.fromEntries(METADATA_FIELDS.map((name) => [name, contact[name]])), merged_from: mergedFrom },
        });
      }),
  );
}

/** `Name: Ada Lovelace`, one line per field with a value; objects as JSON. */
function documentLines(contact: Partial<Contact>): string[] {
  return Object.entries(contact)
    .filter(([, value]) => value !== null && value !== undefined && value !== '')
    .map(
      ([name, value]) =>
        `${labelOf(name)}: ${typeof value === 'string' ? value : Array.isArray(value) ? value.join(', ') : JSON.stringify(value)}`,
    );
}

function labelOf(name: string): string {
  const words = name.replaceAll('_', ' ');
  return words[0]!.toUpperCase() + words.slice(1);
}

function jsonResult(structuredContent: Record<string, unknown>): CallToolResult {
  return { structuredContent, content: [{ type: 'text', text: JSON.stringify(structuredContent) }] };
}
