import type { CallToolResult, ToolAnnotations } from '@modelcontextprotocol/server';
import type { Contact } from '../domain/contact.js';
import { publicOutcome } from '../domain/errors.js';

export const CONTACT_NOT_FOUND_MESSAGE = 'Contact not found';

export const READ_ONLY: ToolAnnotations = { readOnlyHint: true, idempotentHint: true, openWorldHint: false };

/** Runs a tool's work for the key's owner. */
export type ToolRunner = (work: (ownerId: string) => Promise<CallToolResult>) => Promise<CallToolResult>;

/** Asks for the owner on every call; failures become tool errors with the REST API's public messages. */
export function toolRunner(deps: { owner: () => Promise<string>; onError: (error: unknown) => void }): ToolRunner {
  return async (work) => {
    try {
      return await work(await deps.owner());
    } catch (error) {
      const mapped = publicOutcome(error);
      if (mapped.status >= 500) deps.onError(error);
      return toolError(mapped.message);
    }
  };
}

export function toolError(message: string): CallToolResult {
  return { isError: true, content: [{ type: 'text', text: message }] };
}

/** `Ada Lovelace <ada@example.com> — Analyst, Engines Ltd (id …)`: enough to choose a contact and fetch it. */
export function contactLine(contact: Partial<Contact>): string {
  const role = roleOf(contact);
  return (
    `- ${contact.name ?? '(no name)'}` +
    (contact.email === null || contact.email === undefined ? '' : ` <${contact.email}>`) +
    (role === '' ? '' : ` — ${role}`) +
    ` (id ${contact.id})`
  );
}

/** `Ada Lovelace — Analyst, Engines Ltd`: how a contact is named in search results and citations. */
export function contactTitle(contact: Partial<Contact>): string {
  const role = roleOf(contact);
  return `${contact.name ?? contact.email ?? '(no name)'}${role === '' ? '' : ` — ${role}`}`;
}

/** `Analyst, Engines Ltd`: the contact's title and company, as far as they are set. */
export function roleOf(contact: Partial<Contact>): string {
  return [contact.title, contact.company].filter((part) => part !== null && part !== undefined && part !== '').join(', ');
}
