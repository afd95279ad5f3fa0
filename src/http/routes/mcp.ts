import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import type { Authenticator } from '../../auth/authenticator.js';
import { CONTACTS_READ } from '../../domain/scopes.js';
import { createMcpServer } from '../../mcp/server.js';
import type { ContactStore } from '../../store/store.js';
import { INTERNAL_ERROR_MESSAGE } from '../errors.js';
import type { EnforceRateLimit } from '../rate-limit.js';

export const MCP_PATH = '/mcp';

/**
 * The hosted MCP endpoint (Streamable HTTP), stateless: each POST gets its own server and transport, so any
 * instance can answer any request. The key is checked (and rate-limited) exactly as for the REST API, before the
 * body is read; only POST is served, so GET (no server-sent stream) and DELETE (no session) get 405.
 */
export function registerMcpRoute(
  app: FastifyInstance,
  deps: { contacts: ContactStore; authenticator: Authenticator; rateLimit: EnforceRateLimit },
): void {
  const owners = new WeakMap<FastifyRequest, string>();

  app.post(
    MCP_PATH,
    {
      schema: { hide: true },
      onRequest: async (request: FastifyRequest, reply: FastifyReply) => {
        const principal = await deps.authenticator.authenticate(request.headers.authorization, CONTACTS_READ);
        owners.set(request, principal.ownerId);
        await deps.rateLimit(principal.keyId, reply);
      },
    },
    async (request, reply) => {
      const ownerId = owners.get(request)!;
      const server = createMcpServer({
        contacts: deps.contacts,
        owner: async () => ownerId,
        onError: (error) => request.log.error({ err: error }, 'MCP tool failed'),
      });
      // JSON responses rather than an event stream: every tool answers at once, and plain JSON passes any proxy.
      const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
      // The transport writes the response itself; the headers set so far (no-store, request id, …) go with it.
      reply.hijack();
      for (const [name, value] of Object.entries(reply.getHeaders())) {
        if (value !== undefined) reply.raw.setHeader(name, value);
      }
      reply.raw.once('close', () => {
        void transport.close();
        void server.close();
      });
      try {
        await server.connect(transport);
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
