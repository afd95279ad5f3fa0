import type { IncomingHttpHeaders } from 'node:http';
import type { Counter } from 'prom-client';
import { MODERN_PROTOCOL_VERSION } from '../domain/mcp-resource.js';

/** Counts the JSON-RPC requests of an answered POST /mcp, by method and (for tools/call) tool. */
export type CountMcpMessages = (headers: IncomingHttpHeaders, body: unknown) => void;

/** Distinct values a label may take before the rest count as `other`: method and tool names come from clients. */
const MAX_LABEL_VALUES = 40;
const NO_TOOL = '';

/**
 * A 2026-07-28 request names its method and tool in the Mcp-Method and Mcp-Name headers, which the SDK has checked
 * against the body before answering (a mismatch is a 400, never counted), so they are read from there; any other
 * request's headers are unchecked, so its body (one message or a 2025 batch) is read as Fastify parsed it. Either way
 * nothing is parsed twice.
 */
export function mcpMessageCounter(counter: Counter<'method' | 'tool'>): CountMcpMessages {
  const methods = new BoundedLabel(MAX_LABEL_VALUES);
  const tools = new BoundedLabel(MAX_LABEL_VALUES);
  const count = (method: string, tool: string | undefined) =>
    counter.inc({ method: methods.of(method), tool: method === 'tools/call' && tool !== undefined ? tools.of(tool) : NO_TOOL });
  return (headers, body) => {
    const method = headers['mcp-method'];
    if (headers['mcp-protocol-version'] === MODERN_PROTOCOL_VERSION && typeof method === 'string') {
      return count(method, headerName(headers['mcp-name']));
    }
    for (const message of Array.isArray(body) ? body : [body]) {
      const { method: bodyMethod, id, params } = (message ?? {}) as { method?: unknown; id?: unknown; params?: { name?: unknown } };
      if (typeof bodyMethod === 'string' && id !== undefined) count(bodyMethod, stringOrUndefined(params?.name));
    }
  };
}

/** Mcp-Name as sent, or decoded from the `=?base64?…?=` form SEP-2243 gives names that are not plain ASCII. */
function headerName(value: string | string[] | undefined): string | undefined {
  if (typeof value !== 'string') return undefined;
  const encoded = /^=\?base64\?(.*)\?=$/.exec(value)?.[1];
  return encoded === undefined ? value : Buffer.from(encoded, 'base64').toString('utf8');
}

function stringOrUndefined(value: unknown): string | undefined {
  return typeof value === 'string' ? value : undefined;
}

/** The values seen first, up to a bound; past it every new value is `other`, so a client cannot grow the series. */
class BoundedLabel {
  private readonly seen = new Set<string>();

  constructor(private readonly max: number) {}

  of(value: string): string {
    if (this.seen.has(value)) return value;
    if (this.seen.size >= this.max) return 'other';
    this.seen.add(value);
    return value;
  }
}
