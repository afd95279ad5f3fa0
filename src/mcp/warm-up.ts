import type { ContactReader } from '../operations/contacts.js';

type Hosted = typeof import('./hosted.js');

/** An owner id no user has: the warm-up's search reads the index and the list, and finds nothing. */
const NOBODY = '00000000-0000-7000-8000-000000000000';

/**
 * One search_contacts call through the whole hosted pipeline (server, metered transport, the SDK's web-standard
 * transport, the store's search statements), for nobody, before the server listens. A worker's first call compiled
 * all of that on the way and took 160 ms of CPU instead of 10-20 ms (SQLite, 40k network); now the warm-up does.
 * It never stops a start: a failure only leaves the first call slower.
 */
export async function warmUpHostedSearch(hosted: Hosted, contacts: ContactReader, endpointUrl: string): Promise<void> {
  const server = hosted.createMcpServer({ contacts, owner: async () => NOBODY, contactUrl: (id) => id, onError: () => {} });
  const transport = new hosted.WebStandardStreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
  const metered = new hosted.MeteredTransport(transport, { maxResponseBytes: 64 * 1024, admitToolCall: async () => ({ allowed: true }) });
  try {
    await server.connect(metered);
    const headers = { accept: 'application/json, text/event-stream', 'content-type': 'application/json' };
    const call = { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'search_contacts', arguments: { query: 'warm up' } } };
    const answer = await transport.handleRequest(new Request(endpointUrl, { method: 'POST', headers }), { parsedBody: call });
    await answer.arrayBuffer();
  } catch {
    // Nothing to do: the first real call compiles what is left.
  } finally {
    await metered.close().catch(() => {});
    await server.close().catch(() => {});
  }
}
