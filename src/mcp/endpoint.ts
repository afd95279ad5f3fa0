import { createMcpHandler, isLegacyRequest, WebStandardStreamableHTTPServerTransport } from '@modelcontextprotocol/server';
import { MeteredTransport, tooLargeRefusal, type ToolCallAdmission } from './metered-transport.js';
import { createMcpServer, type McpReadSources } from './server.js';

export { MODERN_PROTOCOL_VERSION } from '../domain/mcp-resource.js';

/** Who one /mcp request acts for, and how its calls are admitted. */
export interface McpCaller {
  /** The owner the key or token resolved to: every read carries it. */
  ownerId: string;
  /** Told of an unexpected failure; the caller only sees "Internal server error". */
  onError: (error: unknown) => void;
  /** Asked before each call of a 2025-era batch (the request's own unit pays for the first). */
  admitCall: () => Promise<ToolCallAdmission>;
}

export interface McpEndpointOptions {
  /** What every caller's server reads (createMcpServer). */
  sources: McpReadSources;
  /** Most bytes one response may hold (MCP_RESPONSE_LIMIT_BYTES). */
  maxResponseBytes: number;
  /** Told of requests the SDK rejected (a missing or contradicting header, an unknown revision) and of its failures. */
  onRejected: (error: Error) => void;
}

/** Answers one POST /mcp whose body Fastify has parsed. */
export type McpEndpoint = (request: Request, body: unknown, caller: McpCaller) => Promise<Response>;

/**
 * Both protocol eras on one URL, stateless, from one server factory. A 2026-07-28 request (its `_meta` envelope names
 * the revision) goes to the SDK's createMcpHandler, which checks MCP-Protocol-Version, Mcp-Method and Mcp-Name against
 * the body (-32020 when they are missing or contradict it) and answers its one message. Any other request is a
 * 2025-era one (2025-11-25, 2025-06-18 or 2025-03-26, the revision its initialize or header names): it is served as
 * before, by a fresh server on a JSON-answering transport wrapped in MeteredTransport, which holds a batch's calls to
 * the rate limit and its answers to the response cap. The SDK's own legacy fallback would answer those clients with
 * event streams and build its transport where nothing can meter it, hence this routing, which its isLegacyRequest is
 * for.
 */
export function createMcpEndpoint(options: McpEndpointOptions): McpEndpoint {
  const serverFor = (caller: McpCaller) =>
    createMcpServer({
      ...options.sources,
      owner: async () => caller.ownerId,
      onError: caller.onError,
    });
  // The factory learns its caller from the Request it is handed back: createMcpHandler is made once per process.
  const callers = new WeakMap<Request, McpCaller>();
  const modern = createMcpHandler(
    ({ requestInfo }) => {
      const caller = requestInfo === undefined ? undefined : callers.get(requestInfo);
      if (caller === undefined) throw new Error('An MCP request reached the server factory without its caller');
      return serverFor(caller);
    },
    // responseMode stays 'auto': JSON unless a tool sends a message before its result, which none does; 'json' would say
    // so on stderr (console.warn) each time a handler is made.
    { legacy: 'reject', onerror: options.onRejected },
  );

  return async (request, body, caller) => {
    if (await isLegacyRequest(request, body)) return serveLegacy(serverFor(caller), request, body, caller, options.maxResponseBytes);
    callers.set(request, caller);
    return withinCap(await modern.fetch(request, { parsedBody: body }), body, options.maxResponseBytes);
  };
}

/**
 * A 2026-07-28 answer as sent, or, past `maxResponseBytes`, the refusal a 2025 batch's call gets there (MeteredTransport
 * caps those): the request is one message, so its answer is the one to replace.
 */
async function withinCap(answer: Response, body: unknown, maxResponseBytes: number): Promise<Response> {
  if (!answer.headers.get('content-type')?.startsWith('application/json')) return answer;
  const bytes = await answer.arrayBuffer();
  const headers = new Headers(answer.headers);
  headers.delete('content-length');
  if (bytes.byteLength <= maxResponseBytes) return new Response(bytes, { status: answer.status, headers });
  const request = body as { id: string | number; method: string };
  return new Response(JSON.stringify(tooLargeRefusal(request, maxResponseBytes)), { status: answer.status, headers });
}

async function serveLegacy(
  server: ReturnType<typeof createMcpServer>,
  request: Request,
  body: unknown,
  caller: McpCaller,
  maxResponseBytes: number,
): Promise<Response> {
  // JSON responses rather than an event stream: every tool answers at once, and plain JSON passes any proxy.
  const transport = new WebStandardStreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
  const metered = new MeteredTransport(transport, { maxResponseBytes, admitToolCall: caller.admitCall });
  const close = () => {
    void metered.close();
    void server.close();
  };
  // A client that goes away stops the calls of its batch still queued.
  request.signal.addEventListener('abort', close, { once: true });
  try {
    await server.connect(metered);
    return await transport.handleRequest(request, { parsedBody: body });
  } finally {
    request.signal.removeEventListener('abort', close);
    close();
  }
}
