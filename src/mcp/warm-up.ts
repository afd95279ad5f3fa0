import { CLIENT_CAPABILITIES_META_KEY, PROTOCOL_VERSION_META_KEY } from '@modelcontextprotocol/server';
import { MODERN_PROTOCOL_VERSION, type McpEndpoint } from './endpoint.js';

/** An owner id no user has: the warm-up's search reads the index and the list, and finds nothing. */
const NOBODY = '00000000-0000-7000-8000-000000000000';

const SEARCH = { name: 'search_contacts', arguments: { query: 'warm up' } };

/**
 * One search_contacts call through each era's whole pipeline (the SDK's routing, server, transport, the store's search
 * statements), for nobody, before the server listens. A worker's first call compiled all of that on the way and took
 * 160 ms of CPU instead of 10-20 ms (SQLite, 40k network); now the warm-up does. It never stops a start: a failure only
 * leaves the first call slower.
 */
export async function warmUpHostedSearch(endpoint: McpEndpoint, endpointUrl: string): Promise<void> {
  const caller = { ownerId: NOBODY, onError: () => {}, admitCall: async () => ({ allowed: true }) as const };
  const headers = { accept: 'application/json, text/event-stream', 'content-type': 'application/json' };
  const legacy = { jsonrpc: '2.0', id: 1, method: 'tools/call', params: SEARCH };
  const modern = {
    ...legacy,
    params: { ...SEARCH, _meta: { [PROTOCOL_VERSION_META_KEY]: MODERN_PROTOCOL_VERSION, [CLIENT_CAPABILITIES_META_KEY]: {} } },
  };
  const modernHeaders = {
    ...headers,
    'mcp-protocol-version': MODERN_PROTOCOL_VERSION,
    'mcp-method': 'tools/call',
    'mcp-name': SEARCH.name,
  };
  try {
    for (const [body, sent] of [
      [legacy, headers],
      [modern, modernHeaders],
    ] as const) {
      const answer = await endpoint(new Request(endpointUrl, { method: 'POST', headers: sent }), body, caller);
      await answer.arrayBuffer();
    }
  } catch {
    // Nothing to do: the first real call compiles what is left.
  }
}
