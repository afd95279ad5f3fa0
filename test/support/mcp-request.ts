import type { FastifyInstance } from 'fastify';
import { bearer } from './app.js';

/** POST /mcp as a Streamable HTTP client sends it: a JSON-RPC body with a credential, taking JSON or an event stream. */
export function postMcp(app: FastifyInstance, credential: string, body: unknown, headers: Record<string, string> = {}) {
  return app.inject({
    method: 'POST',
    url: '/mcp',
    headers: { ...bearer(credential), 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...headers },
    payload: JSON.stringify(body),
  });
}
