import { McpServer } from '@modelcontextprotocol/server';
import { AjvJsonSchemaValidator } from '@modelcontextprotocol/server/validators/ajv';
import type { ChangeLogReader } from '../operations/change-feed.js';
import type { ContactReader } from '../operations/contacts.js';
import type { ServiceKeySource } from '../web/service-key.js';
import { MCP_CACHE_HINTS } from './cache-hints.js';
import { registerChangeTool } from './change-tool.js';
import { CONTACT_CARDS_RESOURCE, registerContactCards } from './contact-cards.js';
import { registerContactResources } from './contact-resources.js';
import { registerOpenAiTools } from './openai-tools.js';
import { toolRunner } from './tool-results.js';
import { registerContactTools, type ContactToolsDependencies } from './tools.js';

export const MCP_SERVER_NAME = 'contacts-api';
export const MCP_SERVER_VERSION = '1.0.0';

const INSTRUCTIONS =
  'Read-only access to the contacts in the user’s private network. Use search_contacts to find people by name, ' +
  'email, company, title, school, location or tag; get_contact to fetch one by id; list_contacts to page through all; ' +
  'list_changes for who was added, changed, merged or deleted since a time or since its last answer. ' +
  'Each contact is also a resource, contacts://contact/{id}. ' +
  'search and fetch do the same in the shape ChatGPT’s connectors and deep research expect. Results leave out the ' +
  'large enrichment and research_data fields unless asked for with `fields`.';

/**
 * The JSON Schema validator every server of the process shares. The SDK makes one per server unless given one, and
 * making it (an Ajv instance with its formats) took 2.2 of the hosted endpoint's milliseconds per request, each request
 * having its own server; it holds no state of a caller (these tools never ask the client for input to validate).
 */
let validator: AjvJsonSchemaValidator | undefined;

/** What every MCP server of a process reads: the contacts and their change log, and how contacts are linked. */
export interface McpReadSources {
  contacts: ContactReader & ChangeLogReader;
  /** The link the search and fetch tools give a contact (CONTACT_URL_TEMPLATE). */
  contactUrl: (id: string) => string;
  /** Signs and checks list_changes' tokens and resources/list's cursors. */
  serviceKey: ServiceKeySource;
  /** CHANGES_RETENTION_DAYS, in ms: how far back list_changes reaches. */
  retentionMs: number;
}

/** The sources, and one caller: the owner asked on every call, and where an unexpected failure is told. */
export type McpServerDependencies = McpReadSources & Omit<ContactToolsDependencies, 'contacts' | 'contactUrl'>;

/**
 * An MCP server with the contact tools and resources, for one caller: the factory both entries call, createMcpHandler's
 * per HTTP request (stateless) and serveStdio's per connection. Tools are listed in the order registered here:
 * list_contacts, search_contacts, get_contact, list_changes, then search and fetch (2026-07-28 asks for a fixed order).
 */
export function createMcpServer(deps: McpServerDependencies): McpServer {
  validator ??= new AjvJsonSchemaValidator();
  const server = new McpServer(
    { name: MCP_SERVER_NAME, version: MCP_SERVER_VERSION },
    { instructions: INSTRUCTIONS, jsonSchemaValidator: validator, cacheHints: MCP_CACHE_HINTS },
  );
  const run = toolRunner(deps);
  registerContactTools(server, deps, run);
  registerChangeTool(server, deps, run);
  registerOpenAiTools(server, { run, contacts: deps.contacts, contactUrl: deps.contactUrl });
  registerContactCards(server, deps.onError);
  registerContactResources(server, { ...deps, fixedResources: [CONTACT_CARDS_RESOURCE] });
  // McpServer advertises tools.listChanged, but these tools never change, so that notification never comes.
  server.server.registerCapabilities({ tools: { listChanged: undefined } });
  return server;
}
