import type { FastifyInstance } from 'fastify';
import { credentialed } from './requests.js';

/**
 * POST /mcp as a Streamable HTTP client sends it: a JSON-RPC body with a credential (none when null), taking JSON or an
 * event stream. `headers` are added and may replace any of these.
 */
export function postMcp(app: FastifyInstance, credential: string | null, body: unknown, headers: Record<string, string> = {}) {
  return app.inject({
    method: 'POST',
    url: '/mcp',
    headers: credentialed(credential, { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...headers }),
    payload: JSON.stringify(body),
  });
}
