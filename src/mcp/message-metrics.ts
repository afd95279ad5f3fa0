import type { IncomingHttpHeaders } from 'node:http';
import type { Counter } from 'prom-client';

/** Counts the JSON-RPC requests of an answered POST /mcp, by method and (for tools/call) tool. */
export type CountMcpMessages = (headers: IncomingHttpHeaders, body: unknown) => void;

/** Distinct values a label may take before the rest count as `other`: method and tool names come from clients. */
const MAX_LABEL_VALUES = 40;
const NO_TOOL = '';

/**
 * A 2026-07-28 request names its method and tool in the Mcp-Method and Mcp-Name headers, which the SDK has checked
 * against the body before answering, so they are read from there; a 2025-era body (one message or a batch) is read as
 * Fastify parsed it. Either way nothing is parsed twice.
 */
export function mcpMessageCounter(counter: Counter<'method' | 'tool'>): CountMcpMessages {
  const methods = new BoundedLabel(MAX_LABEL_VALUES);
  const tools = new BoundedLabel(MAX_LABEL_VALUES);
  const count = (method: string, tool: string | undefined) =>
    counter.inc({ method: methods.of(method), tool: method === 'tools/call' && tool !== undefined ? tools.of(tool) : NO_TOOL });
  return (headers, body) => {
    const method = headers['mcp-method'];
    if (typeof method === 'string') return count(method, stringOrUndefined(headers['mcp-name']));
    for (const message of Array.isArray(body) ? body : [body]) {
      const { method: bodyMethod, id, params } = (message ?? {}) as { method?: unknown; id?: unknown; params?: { name?: unknown } };
      if (typeof bodyMethod === 'string' && id !== undefined) count(bodyMethod, stringOrUndefined(params?.name));
    }
  };
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
