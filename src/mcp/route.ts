import type { FastifyInstance, FastifyRequest } from 'fastify';
import { reservationBytes, type InflightBytes } from './inflight-bytes.js';
import { setTimeout as delay } from 'node:timers/promises';
import type { ToolCallAdmission } from './metered-transport.js';
import type { CountMcpMessages } from './message-metrics.js';
import type { McpReadSources } from './server.js';
import { MCP_PATH } from '../domain/mcp-resource.js';
import { principalOf } from '../web/authorize.js';
import { handleError } from '../web/errors.js';
import type { RateLimiter } from '../web/rate-limit.js';

/** A batch of 20 calls takes a few KB; anything near this is not a client talking to these tools. */
export const MCP_BODY_LIMIT_BYTES = 64 * 1024;
/**
 * Measured: list_contacts with limit 100 answers about 90 KB over a realistic network, 570 KB when every contact
 * carries a scraped profile of a few KB (the benchmark's large enrichment). A MiB holds that page with room to
 * spare, and is already more than a model's context takes in; a bigger page is refused with advice to page smaller.
 */
export const MCP_RESPONSE_LIMIT_BYTES = 1024 * 1024;
export const MCP_BUSY_MESSAGE = 'Server busy: this process holds as much MCP work as it may; retry in a second';

/**
 * The hosted MCP endpoint (Streamable HTTP), stateless: each POST gets its own server (src/mcp/endpoint.ts serves both
 * protocol eras), so any instance can answer any request. It is registered under registerAuthorizedRoutes: the key is checked (and
 * rate-limited) exactly as for the REST API, before the body is read; only POST is served, so GET (no server-sent stream) and DELETE (no session) get 405.
 * A request spends one unit of the key's limit, which pays for its first call; each further call of a 2025-era
 * batch spends one more (docs/mcp-limits.md). A 2026-07-28 request holds one message, so its unit is its call's.
 */
export function registerMcpRoute(
  app: FastifyInstance,
  deps: {
    /** What every caller's server reads (createMcpServer). */
    sources: McpReadSources;
    rateLimiter: RateLimiter;
    /** CORS_ORIGINS and OAUTH_ISSUER: what a browser's Origin may be (see originRefusal). */
    allowed: { origins: readonly string[]; issuer: string };
    /** Counts the messages of an answered request by method and tool (the metrics). */
    countMessages: CountMcpMessages;
    /** MCP_INFLIGHT_MB: what the answers being built and kept may take in this process; past it, 503. */
    inflight: InflightBytes;
  },
): void {
  // What the transport tells tools as the request's URL: this endpoint under the issuer, the resource tokens are bound to.
  const endpointUrl = new URL(MCP_PATH, deps.allowed.issuer).href;
  let loaded: Promise<Loaded> | undefined;
  // Imported apart from the rest of the server, so that the one-shot CLI commands never load the MCP SDK.
  const loadEndpoint = () =>
    (loaded ??= import('./hosted.js').then((hosted) => ({
      ...hosted,
      endpoint: hosted.createMcpEndpoint({
        sources: deps.sources,
        maxResponseBytes: MCP_RESPONSE_LIMIT_BYTES,
        onRejected: (error) =>
          // The SDK words what a client sent wrong (a missing or contradicting header, an unknown revision) this way;
          // anything else it reports is a failure of its own or of the server factory.
          error.message.startsWith(SDK_REJECTION_PREFIX)
            ? app.log.debug({ err: error }, 'MCP request rejected')
            : app.log.error({ err: error }, 'MCP request failed'),
      }),
    })));
  // Loaded and run once before the server listens: a worker's first call did both, the slowest right after a start
  // (250 ms of CPU). It adds about 3 MB to a worker. A database that is down or slow at start never holds the listen
  // back longer than WARM_UP_WAIT_MS: the warm-up then finishes (or fails) on its own.
  app.addHook('onReady', async () => {
    const warmUp = loadEndpoint()
      .then(({ warmUpHostedSearch, endpoint }) => warmUpHostedSearch(endpoint, endpointUrl))
      .catch(() => undefined);
    await Promise.race([warmUp, delay(WARM_UP_WAIT_MS, undefined, { ref: false })]);
  });
  app.post(
    MCP_PATH,
    {
      schema: { hide: true },
      config: { compress: true },
      bodyLimit: MCP_BODY_LIMIT_BYTES,
      onRequest: async (request, reply) => {
        const refusal = originRefusal(request.headers.origin, deps.allowed);
        if (refusal !== null) return reply.code(403).send(jsonRpcError(-32000, refusal));
      },
      // A body that is not JSON is a JSON-RPC parse error (-32700); JSON that is not JSON-RPC the SDK answers with -32600.
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
      const { batchRefusal, endpoint } = await loadEndpoint();
      const refusal = batchRefusal(request.body, headerValue(request.headers['mcp-protocol-version']));
      if (refusal !== null) return reply.code(400).send(jsonRpcError(-32600, refusal));
      // Reserved before anything runs, whatever the rate limit allowed: answers of many batches at once exhausted the heap.
      const release = deps.inflight.reserve(reservationBytes(request.body, MCP_RESPONSE_LIMIT_BYTES));
      if (release === null) return reply.code(503).header('retry-after', '1').send(jsonRpcError(-32000, MCP_BUSY_MESSAGE));
      reply.raw.once('close', release);
      const { ownerId, keyId } = principalOf(request);
      let prepaidCalls = 1;
      const admitCall = async (): Promise<ToolCallAdmission> => {
        if (prepaidCalls > 0) {
          prepaidCalls -= 1;
          return { allowed: true };
        }
        const verdict = await deps.rateLimiter.count(keyId, request.log);
        // The response is sent once every call has answered, so its headers end up telling the batch's final count.
        reply.headers(verdict.headers);
        return verdict;
      };
      const gone = new AbortController();
      reply.raw.once('close', () => gone.abort());
      const answer = await endpoint(webRequestOf(request, endpointUrl, gone.signal), request.body, {
        ownerId,
        admitCall,
        onError: (error) => request.log.error({ err: error }, 'MCP tool failed'),
      });
      if (answer.ok) deps.countMessages(request.headers, request.body);
      // Sent by Fastify, not written by the SDK, so the compression plugin and every hook see it as any answer.
      answer.headers.forEach((value, name) => void reply.header(name, value));
      return reply.code(answer.status).send(answer.body === null ? undefined : Buffer.from(await answer.arrayBuffer()));
    },
  );
}

/** The request as the SDK reads it: its headers (Fastify parsed the body already), aborted when the client goes away. */
function webRequestOf(request: FastifyRequest, endpointUrl: string, signal: AbortSignal): Request {
  const headers = new Headers();
  for (const [name, value] of Object.entries(request.headers)) if (value !== undefined) headers.set(name, String(value));
  return new Request(endpointUrl, { method: request.method, headers, signal });
}

type Loaded = typeof import('./hosted.js') & { endpoint: import('./endpoint.js').McpEndpoint };

/** How @modelcontextprotocol/server 2.4.0's createMcpHandler begins the errors it reports for a request it refused. */
const SDK_REJECTION_PREFIX = 'Rejected inbound request';

/** How long a start waits for the MCP warm-up (two search statements, well under 100 ms on a healthy database). */
const WARM_UP_WAIT_MS = 2_000;

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
