import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { createServer, request, type Server } from 'node:http';
import { delimiter, dirname, resolve } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { describeEachBackend } from '../support/backends.js';
import { BIN } from '../support/cli.js';
import { freePort, listenOnFreePort } from '../support/listen.js';
import { obtainAccessToken } from '../support/oauth-client.js';
import { createKey, createUser, importNumberedContacts } from '../support/seed.js';
import { startServerProcess, type ServerProcess } from '../support/server-process.js';

/**
 * Both checkers need Node 22; the pinned one comes from the registry, as every other dependency does. The Node and the
 * Inspector are those of the command docs/mcp.md gives readers, so the versions tested are the versions documented.
 */
const [NODE_22, INSPECTOR] = pinnedInspectorCommand(readFileSync(resolve(import.meta.dirname, '../../docs/mcp.md'), 'utf8'));
const CONFORMANCE = '@modelcontextprotocol/conformance@0.1.16';
/** The conformance suite's server scenarios that apply to a server with tools only (no prompts, resources, logging, sampling). */
const SCENARIOS = ['server-initialize', 'ping', 'tools-list', 'dns-rebinding-protection'];
/**
 * The suite's first release with 2026-07-28 server scenarios, and those of them that apply to a server whose tools and
 * resources are its own: the tools-call-*, input-required-*, json-schema-2020-12, http-custom-header-server-validation
 * and resources-read-* / resources-templates-read scenarios read the suite's reference tools and resources only, and
 * the prompts-* ones need prompts, which this server has none of.
 */
const CONFORMANCE_2026 = '@modelcontextprotocol/conformance@0.2.0-alpha.12';
const SCENARIOS_2026 = [
  'server-stateless',
  'tools-list',
  'caching',
  'http-header-validation',
  'dns-rebinding-protection',
  'resources-list',
  'sep-2164-resource-not-found',
];
/**
 * The checks of those scenarios that cannot pass here, each a failure the suite reports: server-stateless's four call
 * its reference tools (test_missing_capability, test_streaming_elicitation, test_logging_tool); caching asks for
 * prompts too.
 */
const NOT_APPLICABLE_2026: Record<string, string[]> = {
  'server-stateless': [
    'sep-2575-server-rejects-undeclared-capability',
    'sep-2575-missing-capability-http-400',
    'sep-2575-http-server-no-independent-requests-on-stream',
    'sep-2575-server-no-log-without-loglevel',
  ],
  caching: ['sep-2549-prompts-list-caching-hints'],
};

/** The ids of the checks a conformance run reports with `outcome` (SUCCESS, FAILURE, WARNING, SKIPPED). */
function checksWith(output: string, outcome: string): string[] {
  // eslint-disable-next-line no-control-regex -- the suite colours its report
  const plain = output.replaceAll(/\u001b\[[0-9;]*m/g, '');
  const ids = [...plain.matchAll(new RegExp(`\\[([\\w-]+)\\s*\\] ${outcome}\\b`, 'g'))].map((match) => match[1]!);
  return [...new Set(ids)];
}

const run = promisify(execFile);

/** The `node@…` and `@modelcontextprotocol/inspector@…` that the documented `npx -y -p … -p … mcp-inspector` pins. */
function pinnedInspectorCommand(doc: string): [string, string] {
  const pins = /npx -y -p (node@\d+\.\d+\.\d+) -p (@modelcontextprotocol\/inspector@\d+\.\d+\.\d+) mcp-inspector --cli/.exec(doc);
  if (pins === null) throw new Error('docs/mcp.md gives no MCP Inspector command with its Node and its version pinned');
  return [pins[1]!, pins[2]!];
}

type Outcome = { code: number; stdout: string; stderr: string };

async function execute(file: string, args: string[], env: NodeJS.ProcessEnv = {}): Promise<Outcome> {
  try {
    const { stdout, stderr } = await run(file, args, { env: { ...process.env, ...env }, timeout: 240_000, maxBuffer: 16 * 1024 * 1024 });
    return { code: 0, stdout, stderr };
  } catch (error) {
    const failed = error as { code: number; stdout: string; stderr: string };
    return { code: failed.code, stdout: failed.stdout, stderr: failed.stderr };
  }
}

/**
 * A checker's command as `npx -y -p node@22 -p <checker> <command>` runs it, installed (or found in npx's cache) once per
 * file: npx resolves the packages again on every call, seconds each time. The command then runs as npx would run it,
 * from the bin folder npx made, with that folder first on PATH so that its scripts run on Node 22.
 */
function checker(checkerPackage: string, command: string): () => Promise<(args: string[]) => Promise<Outcome>> {
  let found: Promise<(args: string[]) => Promise<Outcome>> | undefined;
  return () =>
    (found ??= (async () => {
      const where = await execute('npx', ['-y', '-p', NODE_22, '-p', checkerPackage, '-c', `command -v ${command}`]);
      if (where.code !== 0) throw new Error(`npx cannot fetch ${NODE_22} and ${checkerPackage} from the registry: ${where.stderr}`);
      const bin = where.stdout.trim();
      const path = `${dirname(bin)}${delimiter}${process.env.PATH ?? ''}`;
      return (args: string[]) => execute(bin, args, { PATH: path });
    })());
}
const conformance = checker(CONFORMANCE, 'conformance');
const conformance2026 = checker(CONFORMANCE_2026, 'conformance');
const inspector = checker(INSPECTOR, 'mcp-inspector');

/**
 * The conformance suite sends no credentials: this proxy puts the key on every request, as a configured client would,
 * and leaves Host and Origin as the suite wrote them.
 */
async function startKeyProxy(target: string, key: string): Promise<{ server: Server; origin: string }> {
  const proxy = createServer((incoming, outgoing) => {
    const forwarded = request(
      new URL(incoming.url!, target),
      { method: incoming.method, headers: { ...incoming.headers, authorization: `Bearer ${key}` } },
      (answer) => {
        outgoing.writeHead(answer.statusCode!, answer.headers);
        answer.pipe(outgoing);
      },
    );
    incoming.pipe(forwarded);
  });
  return { server: proxy, origin: (await listenOnFreePort(proxy)).origin };
}

/** The MCP conformance suite and the MCP Inspector's CLI, run from the registry against a spawned server. */
describeEachBackend('independent MCP checkers', (db) => {
  let server: ServerProcess;
  let proxy: { server: Server; origin: string };
  let key: string;
  let available = true;

  beforeAll(async () => {
    try {
      await Promise.all([conformance(), conformance2026(), inspector()]);
    } catch (error) {
      if (process.env.CI === 'true') throw error;
      console.warn(`\n*** MCP conformance and Inspector checks: SKIPPED — ${(error as Error).message} (no registry?). ***\n`);
      available = false;
      return;
    }
    const { store, databaseUrl } = db();
    const owner = await createUser(store);
    await importNumberedContacts(store, owner.id, 3, 'Checker');
    key = (await createKey(store, owner.id)).key;
    const port = await freePort();
    server = await startServerProcess(
      { DATABASE_URL: databaseUrl, OAUTH_ISSUER: `http://127.0.0.1:${port}`, RATE_LIMIT_PER_MINUTE: '0' },
      port,
    );
    proxy = await startKeyProxy(server.url, key);
  }, 300_000);

  afterAll(async () => {
    proxy?.server.close();
    await server?.kill();
  });

  it.for(SCENARIOS)('passes the conformance scenario %s', { timeout: 300_000 }, async (scenario, context) => {
    if (!available) context.skip();
    const url = `${proxy.origin}/mcp`;
    const result = await (await conformance())(['server', '--url', url, '--scenario', scenario]);
    expect(result.stdout, result.stdout + result.stderr).toMatch(/Passed: (\d+)\/\1, 0 failed/);
    expect(result.code).toBe(0);
  });

  it.for(SCENARIOS_2026)('passes the 2026-07-28 conformance scenario %s', { timeout: 300_000 }, async (scenario, context) => {
    if (!available) context.skip();
    const url = `${proxy.origin}/mcp`;
    const result = await (await conformance2026())(['server', '--url', url, '--scenario', scenario, '--spec-version', '2026-07-28']);
    const report = result.stdout + result.stderr;
    expect(checksWith(report, 'SUCCESS').length, report).toBeGreaterThan(0);
    expect(checksWith(report, 'FAILURE').sort(), report).toEqual([...(NOT_APPLICABLE_2026[scenario] ?? [])].sort());
  });

  const inspect = async (target: string[], method: string[]) => (await inspector())(['--cli', ...target, ...method]);

  it('the Inspector CLI lists the tools over HTTP with a key, with no --strict warning, and calls one', async (context) => {
    if (!available) context.skip();
    const http = [`${server.url}/mcp`, '--transport', 'http', '--header', `Authorization: Bearer ${key}`];
    const listed = await inspect(http, ['--method', 'tools/list', '--strict']);
    expect(listed.code, listed.stderr).toBe(0);
    expect(listed.stderr).not.toContain('Warning');
    expect((JSON.parse(listed.stdout) as { tools: unknown[] }).tools).toHaveLength(6);
    const called = await inspect(http, ['--method', 'tools/call', '--tool-name', 'search_contacts', '--tool-arg', 'query=checker']);
    expect(called.code, called.stderr).toBe(0);
    expect(JSON.parse(called.stdout).structuredContent.data).toHaveLength(3);
  }, 300_000);

  it('the Inspector CLI works with an OAuth access token over HTTP, and over stdio with a key', async (context) => {
    if (!available) context.skip();
    const { access_token } = await obtainAccessToken(server.url, key);
    const oauth = await inspect(
      [`${server.url}/mcp`, '--transport', 'http', '--header', `Authorization: Bearer ${access_token}`],
      ['--method', 'tools/list'],
    );
    expect(oauth.code, oauth.stderr).toBe(0);
    expect((JSON.parse(oauth.stdout) as { tools: unknown[] }).tools).toHaveLength(6);
    expect(server.output()).not.toContain(access_token);

    const stdio = [
      process.execPath,
      BIN,
      'mcp',
      '-e',
      `DATABASE_URL=${db().databaseUrl}`,
      '-e',
      `CONTACTS_API_KEY=${key}`,
      '-e',
      'API_KEY_PREFIX=cnt',
    ];
    const listed = await inspect(stdio, ['--method', 'tools/call', '--tool-name', 'list_contacts']);
    expect(listed.code, listed.stderr).toBe(0);
    expect(JSON.parse(listed.stdout).structuredContent.pagination.total).toBe(3);
  }, 300_000);
});
