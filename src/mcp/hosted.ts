/**
 * What the hosted endpoint (POST /mcp) runs, in one module that src/mcp/route.ts loads as the server gets ready
 * (about 3 MB more per worker), and that no other command loads.
 */
export { batchRefusal } from './batches.js';
export { createMcpEndpoint } from './endpoint.js';
export { warmUpHostedSearch } from './warm-up.js';
