import { constants } from 'node:zlib';
import compression from 'compression';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { reservationBytes, type InflightBytes } from '../../mcp/inflight-bytes.js';
import type { ToolCallAdmission } from '../../mcp/metered-transport.js';
import type { ContactStore } from '../../store/store.js';
import { INTERNAL_ERROR_MESSAGE } from '../../domain/errors.js';
import { MCP_PATH } from '../../mcp/endpoint.js';
import { principalOf } from '../authorize.js';
import { handOverResponse } from '../hand-over.js';
import { handleError } from '../errors.js';
import { FAST_LEVELS, MIN_COMPRESSED_BYTES } from '../page-compression.js';
import type { RateLimiter } from '../rate-limit.js';

/** A batch of 20 calls takes a few KB; anything near this is not a client talking to these three tools. */
export const MCP_BODY_LIMIT_BYTES = 64 * 1024;
/**
 * Measured: list_contacts with limit 100 answers about 90 KB over a realistic network, 570 KB when every contact
 * carries a scraped profile of a few KB (the benchmark's large enrichment). A MiB holds that page with room to
 * spare, and is already more than a model's context takes in; a bigger page is refused with advice to page smaller.
 */
export const MCP_RESPONSE_LIMIT_BYTES = 1024 * 1024;
export const MCP_BUSY_MESSAGE = 'Server busy: this process holds as much MCP work as it may; retry in a second';

/**
 * The hosted MCP endpoint (Streamable HTTP), stateless: each POST gets its own server and transport, so any
 * instance can answer any request. It is registered under registerAuthorizedRoutes: the key is checked (and
 * rate-limited) exactly as for the REST API, before the body is read; only POST is served, so GET (no server-sent stream) and DELETE (no session) get 405.
 * A request spends one unit of the key's limit, which pays for its first tool call; each further tool call of a
 * batch spends one more (docs/mcp-limits.md).
 */
export function registerMcpRoute(
  app: FastifyInstance,
  deps: {
    contacts: ContactStore;
    rateLimiter: RateLimiter;
    /** CORS_ORIGINS and OAUTH_ISSUER: what a browser's Origin may be (see originRefusal). */
    allowed: { origins: readonly string[]; issuer: string };
    contactUrl: (id: string) => string;
    /** MCP_INFLIGHT_MB: what the answers being built and kept may take in this process; past it, 503. */
    inflight: InflightBytes;
  },
): void {
  app.post(
    MCP_PATH,
    {
      schema: { hide: true },
      bodyLimit: MCP_BODY_LIMIT_BYTES,
      onRequest: async (request, reply) => {
        const refusal = originRefusal(request.headers.origin, deps.allowed);
        if (refusal !== null) return reply.code(403).send(jsonRpcError(-32000, refusal));
      },
      // A body that is not JSON is a JSON-RPC parse error, as the transport answers for JSON that is not JSON-RPC.
      errorHandler: (error, request, reply) => {
        const code = (error as { code?: unknown }).code;
        if (code === 'FST_ERR_CTP_INVALID_JSON_BODY' || code === 'FST_ERR_CTP_EMPTY_JSON_BODY') {
          void reply.code(400).send(jsonRpcError(-32700, 'Parse error: the body is not valid JSON'));
        } else {
          handleError(error, request, reply);
        }
      },
    },
    async (request, reply) => {
      const { batchRefusal, createMcpServer, MeteredTransport, StreamableHTTPServerTransport } = await loadHosted();
      const refusal = batchRefusal(request.body, headerValue(request.headers['mcp-protocol-version']));
      if (refusal !== null) return reply.code(400).send(jsonRpcError(-32600, refusal));
      // Reserved before anything runs, whatever the rate limit allowed: answers of many batches at once exhausted the heap.
      const release = deps.inflight.reserve(reservationBytes(request.body, MCP_RESPONSE_LIMIT_BYTES));
      if (release === null) return reply.code(503).header('retry-after', '1').send(jsonRpcError(-32000, MCP_BUSY_MESSAGE));
      reply.raw.once('close', release);
      const { ownerId, keyId } = principalOf(request);
      const server = createMcpServer({
        contacts: deps.contacts,
        owner: async () => ownerId,
        contactUrl: deps.contactUrl,
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
      handOverResponse(reply);
      compressWhenAllowed(request, reply);
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

/**
 * The transport writes the response itself, so the `compression` middleware wraps it: Brotli or gzip at the fast
 * levels the listing uses for pages read once, as Accept-Encoding allows, from 1 KB; `Vary: Accept-Encoding` always.
 * A page of tool results is JSON inside JSON and compresses as well as a listing page.
 */
const compressResponse = compression({
  threshold: MIN_COMPRESSED_BYTES,
  level: FAST_LEVELS.gzip,
  brotli: { params: { [constants.BROTLI_PARAM_QUALITY]: FAST_LEVELS.br } },
});

function compressWhenAllowed(request: FastifyRequest, reply: FastifyReply): void {
  // The middleware's types are Express's; it uses only Node's request and response.
  compressResponse(request.raw as never, reply.raw as never, () => undefined);
}

let hosted: Promise<typeof import('../../mcp/hosted.js')> | undefined;
const loadHosted = () => (hosted ??= import('../../mcp/hosted.js'));

/** Browsers write loopback hosts these ways; a page there is on the user's own machine, as the server may be. */
const LOOPBACK_HOSTNAMES = new Set(['localhost', '127.0.0.1', '[::1]']);

/**
 * DNS-rebinding protection (MCP transports, "Security Warning"): a page in a browser always sends Origin, so one not
 * allowed is refused, whatever Host says. Allowed: CORS_ORIGINS, this service's own origin (OAUTH_ISSUER), and
 * loopback origins, which a rebinding attack cannot send (its page's origin is the attacker's host name). Clients
 * outside a browser send no Origin and pass.
 */
export function originRefusal(origin: string | undefined, allowed: { origins: readonly string[]; issuer: string }): string | null {
  if (origin === undefined || allowed.origins.includes(origin) || origin === new URL(allowed.issuer).origin) return null;
  const url = URL.parse(origin);
  if (url !== null && ['http:', 'https:'].includes(url.protocol) && LOOPBACK_HOSTNAMES.has(url.hostname)) return null;
  return `Forbidden: Origin "${origin}" is not allowed to call this MCP server`;
}

function jsonRpcError(code: number, message: string) {
  return { jsonrpc: '2.0', id: null, error: { code, message } };
}

function headerValue(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value.join(', ') : value;
}
