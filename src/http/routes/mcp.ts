import type { FastifyInstance } from 'fastify';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { batchRefusal } from '../../mcp/batches.js';
import { MeteredTransport, type ToolCallAdmission } from '../../mcp/metered-transport.js';
import { createMcpServer } from '../../mcp/server.js';
import type { ContactStore } from '../../store/store.js';
import { INTERNAL_ERROR_MESSAGE } from '../../domain/errors.js';
import { principalOf } from '../authorize.js';
import type { RateLimiter } from '../rate-limit.js';

export const MCP_PATH = '/mcp';
/** A batch of 20 calls takes a few KB; anything near this is not a client talking to these three tools. */
export const MCP_BODY_LIMIT_BYTES = 64 * 1024;
/**
 * Measured: list_contacts with limit 100 answers about 90 KB over a realistic network, 570 KB when every contact
 * carries a scraped profile of a few KB (the benchmark's large enrichment). A MiB holds that page with room to
 * spare, and is already more than a model's context takes in; a bigger page is refused with advice to page smaller.
 */
export const MCP_RESPONSE_LIMIT_BYTES = 1024 * 1024;

/**
 * The hosted MCP endpoint (Streamable HTTP), stateless: each POST gets its own server and transport, so any
 * instance can answer any request. It is registered under registerAuthorizedRoutes: the key is checked (and
 * rate-limited) exactly as for the REST API, before the body is read; only POST is served, so GET (no server-sent stream) and DELETE (no session) get 405.
 * A request spends one unit of the key's limit, which pays for its first tool call; each further tool call of a
 * batch spends one more (docs/mcp-limits.md).
 */
export function registerMcpRoute(app: FastifyInstance, deps: { contacts: ContactStore; rateLimiter: RateLimiter }): void {
  app.post(
    MCP_PATH,
    {
      schema: { hide: true },
      bodyLimit: MCP_BODY_LIMIT_BYTES,
    },
    async (request, reply) => {
      const refusal = batchRefusal(request.body, headerValue(request.headers['mcp-protocol-version']));
      if (refusal !== null) return reply.code(400).send({ jsonrpc: '2.0', id: null, error: { code: -32600, message: refusal } });
      const { ownerId, keyId } = principalOf(request);
      const server = createMcpServer({
        contacts: deps.contacts,
        owner: async () => ownerId,
        onError: (error) => request.log.error({ err: error }, 'MCP tool failed'),
      });
      let prepaidToolCalls = 1;
      const admitToolCall = async (): Promise<ToolCallAdmission> => {
        if (prepaidToolCalls > 0) {
          prepaidToolCalls -= 1;
          return { allowed: true };
        }
        const verdict = await deps.rateLimiter.count(keyId, request.log);
        // The response is written once every call has answered, so its headers end up telling the batch's final count.
        for (const [name, value] of Object.entries(verdict.headers)) reply.raw.setHeader(name, value);
        return verdict;
      };
      // JSON responses rather than an event stream: every tool answers at once, and plain JSON passes any proxy.
      const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
      const metered = new MeteredTransport(transport, { maxResponseBytes: MCP_RESPONSE_LIMIT_BYTES, admitToolCall });
      // The transport writes the response itself; the headers set so far (no-store, request id, …) go with it.
      reply.hijack();
      for (const [name, value] of Object.entries(reply.getHeaders())) {
        if (value !== undefined) reply.raw.setHeader(name, value);
      }
      reply.raw.once('close', () => {
        void metered.close();
        void server.close();
      });
      try {
        await server.connect(metered);
        await transport.handleRequest(request.raw, reply.raw, request.body);
      } catch (error) {
        request.log.error({ err: error }, 'MCP request failed');
        if (reply.raw.headersSent) {
          reply.raw.destroy();
          return;
        }
        reply.raw.writeHead(500, { 'content-type': 'application/json; charset=utf-8' });
        reply.raw.end(JSON.stringify({ error: INTERNAL_ERROR_MESSAGE }));
      }
    },
  );
}

function headerValue(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value.join(', ') : value;
}
