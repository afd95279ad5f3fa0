import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { AjvJsonSchemaValidator } from '@modelcontextprotocol/sdk/validation/ajv';
import { registerOpenAiTools } from './openai-tools.js';
import { toolRunner } from './tool-results.js';
import { registerContactTools, type ContactToolsDependencies } from './tools.js';

export const MCP_SERVER_NAME = 'contacts-api';
export const MCP_SERVER_VERSION = '1.0.0';

const INSTRUCTIONS =
  'Read-only access to the contacts in the user’s private network. Use search_contacts to find people by name, ' +
  'email, company, title, school, location or tag; get_contact to fetch one by id; list_contacts to page through all. ' +
  'search and fetch do the same in the shape ChatGPT’s connectors and deep research expect. Results leave out the ' +
  'large enrichment and research_data fields unless asked for with `fields`.';

/**
 * The JSON Schema validator every server of the process shares. The SDK makes one per server unless given one, and
 * making it (an Ajv instance with its formats) took 2.2 of the hosted endpoint's milliseconds per request, each request
 * having its own server; it holds no state of a caller (these tools never ask the client for input to validate).
 */
let validator: AjvJsonSchemaValidator | undefined;

/**
 * An MCP server with the contact tools, for one caller. Both transports use it: the hosted endpoint builds one
 * per HTTP request (stateless), `contacts-api mcp` one per process.
 */
export function createMcpServer(deps: ContactToolsDependencies): McpServer {
  validator ??= new AjvJsonSchemaValidator();
  const server = new McpServer(
    { name: MCP_SERVER_NAME, version: MCP_SERVER_VERSION },
    { instructions: INSTRUCTIONS, jsonSchemaValidator: validator },
  );
  const run = toolRunner(deps);
  registerContactTools(server, deps, run);
  registerOpenAiTools(server, { run, contacts: deps.contacts, contactUrl: deps.contactUrl });
  // McpServer advertises tools.listChanged, but these tools never change, so that notification never comes.
  server.server.registerCapabilities({ tools: { listChanged: undefined } });
  return server;
}
