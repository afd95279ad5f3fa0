import { DEFAULT_NEGOTIATED_PROTOCOL_VERSION, SUPPORTED_PROTOCOL_VERSIONS } from '@modelcontextprotocol/server';

/**
 * Most messages one JSON-RPC batch may hold. Batches only exist on 2025-03-26 and older, whose clients
 * batch a handful of calls at most; 20 keeps one request's sequential work and its errors small.
 */
export const MAX_BATCH_MESSAGES = 20;

/** The revision whose Streamable HTTP transport made a POST body one JSON-RPC message, removing batches. */
export const BATCHES_REMOVED_IN = '2025-06-18';

/**
 * Why a POST body must be refused as a batch, or null when it is a single message or an allowed batch.
 * A batch's protocol version is its initialize request's, else the MCP-Protocol-Version header's, else
 * 2025-03-26, which the 2025-06-18 transport tells servers to assume when a request names none.
 */
export function batchRefusal(body: unknown, protocolVersionHeader: string | undefined): string | null {
  if (!Array.isArray(body)) return null;
  const version = initializeVersionOf(body) ?? protocolVersionHeader ?? DEFAULT_NEGOTIATED_PROTOCOL_VERSION;
  if (!allowsBatches(version)) {
    return (
      `Invalid Request: protocol version ${version} does not allow JSON-RPC batches (removed in ${BATCHES_REMOVED_IN}); ` +
      'send one message per request'
    );
  }
  if (body.length > MAX_BATCH_MESSAGES) {
    return `Invalid Request: a batch may hold at most ${MAX_BATCH_MESSAGES} messages; this one holds ${body.length}`;
  }
  return null;
}

function allowsBatches(version: string): boolean {
  return SUPPORTED_PROTOCOL_VERSIONS.includes(version) && version < BATCHES_REMOVED_IN;
}

function initializeVersionOf(batch: unknown[]): string | undefined {
  for (const message of batch) {
    const { method, params } = (message ?? {}) as { method?: unknown; params?: { protocolVersion?: unknown } };
    if (method === 'initialize' && typeof params?.protocolVersion === 'string') return params.protocolVersion;
  }
  return undefined;
}
