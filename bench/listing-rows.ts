/**
 * The listing's rows against one target (ceiling, baseline or service): each a warm-up then a measured wrk run, timed
 * in CPU per request; then the change feed and the sequential walk.
 */
import { writeFileSync } from 'node:fs';
import { Agent, request, type IncomingHttpHeaders } from 'node:http';
import { join } from 'node:path';
import { decodeSyncToken, encodeSyncToken } from '../src/domain/changes.js';
import { parseDatabaseUrl } from '../src/domain/database-url.js';
import { SERVICE_KEY_SECRET, ServiceKey } from '../src/domain/service-key.js';
import { openStore } from '../src/store/open-store.js';
import type { Database } from './databases.js';
import type { Coding, Measurement } from './report.js';
import type { RunningServer } from './server-under-test.js';
import { wrk } from './wrk-run.js';

export interface RowsContext {
  port: number;
  connections: number;
  duration: number;
  warmup: number;
  /** Seconds of reading every page in order before the random-page rows. */
  sweepSeconds: number;
  /** Whether a row (by its key: hot, hot-gzip, hot-br, random, random-br, random-2x, random-1c, small, mcp-2025, mcp-2026, feed, walk) runs. */
  runs(row: string): boolean;
  work: string;
  log(message: string): void;
}

/** The Accept-Encoding each coding's rows send, and how their scenario names it. */
const ACCEPT: Record<Coding, string> = { identity: '', gzip: 'gzip', br: 'gzip, br' };
const named = (coding: Coding) => (coding === 'identity' ? '' : ` (${ACCEPT[coding]})`);

export async function measureTarget(
  context: RowsContext,
  target: string,
  db: Database | null,
  server: RunningServer,
  bigNetwork: number,
  extra: { coding?: Coding; walk?: boolean; feed?: boolean },
): Promise<Measurement[]> {
  const { port, connections, duration, runs } = context;
  context.log(`measuring ${target}`);
  const results: Measurement[] = [];
  const load = async (
    scenario: string,
    script: string,
    coding: Coding,
    env: Record<string, string>,
    options = { connections, seconds: duration },
    warmUp: 'once' | 'every page' = 'once',
  ) => {
    const withCoding = coding === 'identity' ? env : { ...env, ACCEPT_ENCODING: ACCEPT[coding] };
    if (warmUp === 'every page') wrk(port, script, { ...withCoding, ORDER: 'sequential' }, { ...options, seconds: context.sweepSeconds });
    if (context.warmup > 0) wrk(port, script, withCoding, { ...options, seconds: context.warmup });
    const measured = await server.measure(() => wrk(port, script, withCoding, options));
    results.push({
      target,
      scenario: `${scenario}${named(coding)}`,
      coding,
      ...measured.result,
      ...perRequest(measured, measured.result.requests),
      peakRssMb: server.takePeaks(),
    });
  };
  const big = `${Math.round(bigNetwork / 1000)}k network`;
  if (db === null) {
    await load(`first page, ${big}`, 'first-page.lua', extra.coding ?? 'identity', { KEY: 'ceiling' });
    return results;
  }
  const firstPage = { KEY: db.bigKey };
  const randomPages = { KEY: db.bigKey, NETWORK: String(db.bigTotal) };
  if (runs('hot')) await load(`first page, ${big}`, 'first-page.lua', 'identity', firstPage);
  if (runs('hot-gzip')) await load(`first page, ${big}`, 'first-page.lua', 'gzip', firstPage);
  if (runs('hot-br')) await load(`first page, ${big}`, 'first-page.lua', 'br', firstPage);
  // A worker keeps the pages it served compressed, as far as its cache holds them: random pages are measured once
  // every page has been read often enough for that, as on a service that has been up a while (random reads alone
  // take tens of seconds to meet every page on every worker).
  if (runs('random')) await load(`random pages, ${big}`, 'random-page.lua', 'identity', randomPages, undefined, 'every page');
  if (runs('random-br')) await load(`random pages, ${big}`, 'random-page.lua', 'br', randomPages, undefined, 'every page');
  // The tail under saturation (issue 15): twice the connections of the other rows.
  if (runs('random-2x'))
    await load(`random pages, ${big}, ${connections * 2} connections`, 'random-page.lua', 'identity', randomPages, {
      connections: connections * 2,
      seconds: duration,
    });
  if (runs('random-1c'))
    await load(`random pages, ${big}, 1 connection`, 'random-page.lua', 'identity', randomPages, { connections: 1, seconds: duration });
  if (runs('small')) await load('random pages, 1k network', 'random-page.lua', 'identity', { KEY: db.smallKey, NETWORK: '950' });
  for (const revision of MCP_REVISIONS) {
    if (!runs(`mcp-${revision.slice(0, 4)}`)) continue;
    const call = { KEY: db.bigKey, NETWORK: String(db.bigTotal), REVISION: revision };
    await assertMcpCallAnswers(port, call);
    await load(`MCP tools/call list_contacts (10 at random offsets), ${revision}, ${big}`, 'mcp-call.lua', 'identity', call);
  }
  if (extra.feed && runs('feed')) {
    const tokensFile = join(context.work, 'feed-tokens.txt');
    writeFileSync(tokensFile, `${(await feedTokens(port, db.bigKey, db.url)).join('\n')}\n`);
    const feed = { KEY: db.bigKey, TOKENS_FILE: tokensFile };
    await load(`changes, 100 a request at random positions, ${big}`, 'changes.lua', 'identity', feed);
    await load(`changes, 100 a request at random positions, ${big}, 1 connection`, 'changes.lua', 'identity', feed, {
      connections: 1,
      seconds: duration,
    });
  }
  if (extra.walk && runs('walk')) {
    const measured = await server.measure(() => walk(port, db.bigKey));
    const { latencies, pages } = measured.result;
    const first = mean(latencies.slice(0, 100));
    const last = mean(latencies.slice(-100));
    results.push({
      target,
      scenario: `sequential walk, ${pages} pages`,
      rps: 1000 / mean(latencies),
      p50: first,
      p99: last,
      ...perRequest(measured, pages),
      note: `mean first 100 pages ${first.toFixed(2)} ms, last 100 ${last.toFixed(2)} ms: ratio ${(last / first).toFixed(2)}`,
      peakRssMb: server.takePeaks(),
    });
  }
  return results;
}

/** The revisions the MCP rows call on (rows mcp-2025 and mcp-2026): the one most clients speak, and the current one. */
const MCP_REVISIONS = ['2025-11-25', '2026-07-28'] as const;

/**
 * One call as mcp-call.lua sends it must answer a tool result, not an error: wrk counts only HTTP statuses, and a
 * JSON-RPC error or a tool error is a 200 that would be timed as a call.
 */
async function assertMcpCallAnswers(port: number, call: { KEY: string; REVISION: string }): Promise<void> {
  const modern = call.REVISION === '2026-07-28';
  const envelope = {
    'io.modelcontextprotocol/protocolVersion': call.REVISION,
    'io.modelcontextprotocol/clientInfo': { name: 'bench', version: '1' },
    'io.modelcontextprotocol/clientCapabilities': {},
  };
  const params = { name: 'list_contacts', arguments: { limit: 10, offset: 0 }, ...(modern ? { _meta: envelope } : {}) };
  const answer = await fetch(`http://127.0.0.1:${port}/mcp`, {
    method: 'POST',
    headers: {
      authorization: `Bearer ${call.KEY}`,
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      'mcp-protocol-version': call.REVISION,
      ...(modern ? { 'mcp-method': 'tools/call', 'mcp-name': 'list_contacts' } : {}),
    },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params }),
  });
  const text = await answer.text();
  const body = answer.ok ? (JSON.parse(text) as { result?: { isError?: boolean; structuredContent?: { data?: unknown[] } } }) : {};
  if (body.result?.isError !== undefined || body.result?.structuredContent?.data?.length !== 10) {
    throw new Error(`MCP ${call.REVISION}: the call mcp-call.lua sends did not answer 10 contacts: ${answer.status} ${text.slice(0, 300)}`);
  }
}

function perRequest(
  measured: { cpuSeconds: number; dbCpuSeconds: number | null; logLines: number | null },
  requests: number,
): Pick<Measurement, 'cpuUs' | 'dbCpuUs' | 'logLinesPerRequest'> {
  const answered = Math.max(1, requests);
  return {
    cpuUs: ((measured.cpuSeconds + (measured.dbCpuSeconds ?? 0)) * 1e6) / answered,
    dbCpuUs: measured.dbCpuSeconds === null ? null : (measured.dbCpuSeconds * 1e6) / answered,
    logLinesPerRequest: measured.logLines === null ? null : measured.logLines / answered,
  };
}

/** One client walking every page in order, timing each request. */
async function walk(port: number, key: string): Promise<{ latencies: number[]; pages: number }> {
  const agent = new Agent({ keepAlive: true, maxSockets: 1 });
  const latencies: number[] = [];
  let offset: number | null = 0;
  while (offset !== null) {
    const started = process.hrtime.bigint();
    const body = await get(port, `/api/v1/contacts?limit=50&offset=${offset}`, key, agent);
    latencies.push(Number(process.hrtime.bigint() - started) / 1e6);
    offset = JSON.parse(body).pagination.nextOffset;
  }
  agent.destroy();
  return { latencies, pages: latencies.length };
}

/** A GET's status, headers and body bytes as sent (a compressed body stays compressed). */
export function getBytes(
  port: number,
  path: string,
  headers: Record<string, string>,
  agent: Agent | false = false,
): Promise<{ status: number; headers: IncomingHttpHeaders; body: Buffer }> {
  return new Promise((done, fail) => {
    const req = request({ host: '127.0.0.1', port, path, agent, headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('end', () => done({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks) }));
    });
    req.on('error', (error) => fail(new Error(`GET ${path}: ${error.message}`, { cause: error })));
    req.end();
  });
}

/** Without `agent`, a connection of its own: a kept-alive socket left idle while wrk ran may be closed under a new request. */
export async function get(port: number, path: string, key: string, agent: Agent | false = false): Promise<string> {
  const answer = await getBytes(port, path, { authorization: `Bearer ${key}` }, agent);
  if (answer.status !== 200) throw new Error(`GET ${path}: ${answer.status}`);
  return answer.body.toString();
}

const mean = (values: number[]) => values.reduce((a, b) => a + b, 0) / values.length;

/**
 * Positions spread evenly over the owner's whole change log: the feed is walked from its start, 1,000 changes a
 * request, keeping each next_since. The first position is crafted (the log's start) the way the service makes them,
 * signed with the database's service key.
 */
async function feedTokens(port: number, key: string, databaseUrl: string): Promise<string[]> {
  const store = await openStore(parseDatabaseUrl(databaseUrl));
  const serviceKey = new ServiceKey(await store.oauth.secret(SERVICE_KEY_SECRET));
  await store.close();
  const current = decodeSyncToken(JSON.parse(await get(port, '/api/v1/contacts/changes', key)).next_since, serviceKey);
  const tokens = [encodeSyncToken({ ...current, seq: 0, after: null }, serviceKey)];
  for (;;) {
    const answer = JSON.parse(await get(port, `/api/v1/contacts/changes?limit=1000&since=${tokens.at(-1)}`, key));
    if (!answer.has_more) return tokens;
    tokens.push(answer.next_since);
  }
}
