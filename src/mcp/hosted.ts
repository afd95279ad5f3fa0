/**
 * What the hosted endpoint (POST /mcp) runs, in one module that src/mcp/route.ts loads at the first request:
 * the MCP SDK and its schemas take about 20 MB, which a server no agent calls would carry in every worker.
 */
export { WebStandardStreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js';
export { batchRefusal } from './batches.js';
export { MeteredTransport } from './metered-transport.js';
export { createMcpServer } from './server.js';
