import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { registerContactTools, type ContactToolsDependencies } from './tools.js';

export const MCP_SERVER_NAME = 'contacts-api';
export const MCP_SERVER_VERSION = '1.0.0';

const INSTRUCTIONS =
  'Read-only access to the contacts in the user’s private network. Use search_contacts to find people by name, ' +
  'email, company, title, school, location or tag; get_contact to fetch one by id; list_contacts to page through all.';

/**
 * An MCP server with the contact tools, for one caller. Both transports use it: the hosted endpoint builds one
 * per HTTP request (stateless), `contacts-api mcp` one per process.
 */
export function createMcpServer(deps: ContactToolsDependencies): McpServer {
  const server = new McpServer({ name: MCP_SERVER_NAME, version: MCP_SERVER_VERSION }, { instructions: INSTRUCTIONS });
  registerContactTools(server, deps);
  // McpServer advertises tools.listChanged, but these tools never change, so that notification never comes.
  server.server.registerCapabilities({ tools: { listChanged: undefined } });
  return server;
}
