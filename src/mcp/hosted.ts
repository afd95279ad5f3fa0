/**
 * What the hosted endpoint (POST /mcp) runs, in one module that src/mcp/route.ts loads as the server gets ready
 * (about 3 MB more per worker), and that no other command loads.
 */
export { WebStandardStreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js';
export { batchRefusal } from './batches.js';
export { MeteredTransport } from './metered-transport.js';
export { createMcpServer } from './server.js';
