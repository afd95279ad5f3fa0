/**
 * The security review's load mix, for bench/hostile-mix.ts and the test that keeps a short run of it: REST pages,
 * MCP tool calls and batches, health probes and bad keys, over many connections at once. Every answer is sorted by
 * status; a 5xx is explained only when it is a 503 that says when to retry (Retry-After).
 */
import autocannon from 'autocannon';
import { generateApiKey } from '../src/domain/api-key.js';

export interface LoadMixOptions {
  url: string;
  /** A key of an owner with `contactCount` contacts. */
  key: string;
  contactCount: number;
  connections: number;
  seconds: number;
  /** Which requests each connection cycles through (default: all of them, HOSTILE_MIX). */
  mix?: readonly MixRequest[];
}

export type MixRequest = 'page' | 'mcp-call' | 'mcp-batch' | 'healthz' | 'readyz' | 'malformed-key' | 'unknown-key';

/** Each connection sends these in turn: pages and MCP work most, then probes and bad keys. */
export const HOSTILE_MIX: readonly MixRequest[] = [
  'page',
  'mcp-batch',
  'mcp-call',
  'healthz',
  'page',
  'mcp-batch',
  'unknown-key',
  'readyz',
  'mcp-call',
  'malformed-key',
];

export interface LoadMixOutcome {
  answers: number;
  /** Answers by HTTP status. */
  statuses: Record<string, number>;
  /** 5xx answers other than 503 with Retry-After: each one is a failure. */
  unexplained5xx: number;
  /** Connection errors and timeouts (no answer within 10 s), as autocannon counts them. */
  socketErrors: number;
  latencyMs: { p50: number; p99: number };
}

const BATCH_CALLS = 20;

export async function runLoadMix(options: LoadMixOptions): Promise<LoadMixOutcome> {
  const statuses: Record<string, number> = {};
  let unexplained5xx = 0;
  const onResponse = (status: number, _body: string, _context: object, headers: Record<string, unknown> = {}) => {
    statuses[status] = (statuses[status] ?? 0) + 1;
    const retryAfter = Object.keys(headers).some((name) => name.toLowerCase() === 'retry-after');
    if (status >= 500 && !(status === 503 && retryAfter)) unexplained5xx += 1;
  };
  const requests = (options.mix ?? HOSTILE_MIX).map((kind, index) => ({
    ...requestOf(kind, index, options),
    onResponse,
  })) as autocannon.Request[];
  const result = await autocannon({ url: options.url, connections: options.connections, duration: options.seconds, requests });
  const answers = Object.values(statuses).reduce((sum, count) => sum + count, 0);
  return {
    answers,
    statuses,
    unexplained5xx,
    socketErrors: result.errors,
    latencyMs: { p50: result.latency.p50, p99: result.latency.p99 },
  };
}

function requestOf(kind: MixRequest, index: number, options: LoadMixOptions): Partial<autocannon.Request> {
  const bearer = (key: string) => ({ authorization: `Bearer ${key}` });
  const offset = Math.floor(((index * 7919) % 100) * (options.contactCount / 100));
  switch (kind) {
    case 'page':
      return { method: 'GET', path: `/api/v1/contacts?limit=100&offset=${offset}`, headers: bearer(options.key) };
    case 'mcp-call':
      return mcpPost(options.key, listContacts(1, offset), '2025-11-25');
    case 'mcp-batch':
      return mcpPost(
        options.key,
        Array.from({ length: BATCH_CALLS }, (_, call) => listContacts(call + 1, (offset + call * 100) % options.contactCount)),
        '2025-03-26',
      );
    case 'healthz':
      return { method: 'GET', path: '/healthz' };
    case 'readyz':
      return { method: 'GET', path: '/readyz' };
    case 'malformed-key':
      return { method: 'GET', path: '/api/v1/contacts', headers: bearer('cnt_live_not-a-key') };
    case 'unknown-key':
      // Well formed, checksum right: it takes a database lookup to refuse.
      return { method: 'GET', path: '/api/v1/contacts', headers: bearer(generateApiKey('cnt')) };
  }
}

function listContacts(id: number, offset: number) {
  return { jsonrpc: '2.0', id, method: 'tools/call', params: { name: 'list_contacts', arguments: { limit: 100, offset } } };
}

function mcpPost(key: string, body: unknown, protocolVersion: string): Partial<autocannon.Request> {
  return {
    method: 'POST',
    path: '/mcp',
    headers: {
      authorization: `Bearer ${key}`,
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      'mcp-protocol-version': protocolVersion,
    },
    body: JSON.stringify(body),
  };
}
