import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { createInterface } from 'node:readline';
import { beforeAll, expect, it } from 'vitest';
import { STDIO_LINE_LIMIT_CHARACTERS } from '../../src/mcp/unreadable-lines.js';
import { describeEachBackend } from '../support/backends.js';
import { BIN, mcpEnv } from '../support/cli.js';
import { createKey, createUser } from '../support/seed.js';

describeEachBackend('MCP over stdio, lines that are not messages', (db) => {
  let key: string;
  beforeAll(async () => {
    const { store } = db();
    key = (await createKey(store, (await createUser(store)).id)).key;
  });

  it('answers a line that is not JSON with -32700 and JSON that is not JSON-RPC with -32600, then goes on serving', async () => {
    const child = spawn(process.execPath, [BIN, 'mcp'], { env: mcpEnv(db().databaseUrl, key), stdio: ['pipe', 'pipe', 'pipe'] });
    const lines = createInterface({ input: child.stdout! })[Symbol.asyncIterator]();
    const next = async () => JSON.parse((await lines.next()).value as string) as Record<string, unknown>;
    try {
      child.stdin!.write('{"jsonrpc": "2.0", "method": "initialize", "id"\n');
      expect(await next()).toEqual({ jsonrpc: '2.0', id: null, error: { code: -32700, message: 'Parse error: the line is not JSON' } });
      child.stdin!.write('{"hello": "world"}\n');
      expect(await next()).toEqual({
        jsonrpc: '2.0',
        id: null,
        error: { code: -32600, message: 'Invalid Request: the line is JSON but not a JSON-RPC 2.0 message' },
      });
      child.stdin!.write(`${JSON.stringify({ jsonrpc: '2.0', id: 7, method: 'ping' })}\n`);
      expect(await next()).toEqual({ jsonrpc: '2.0', id: 7, result: {} });
      // A line that never ends within the limit is answered once and skipped to its end; the next line is served.
      for (let written = 0; written < 4 * STDIO_LINE_LIMIT_CHARACTERS; written += 16 * 1024) child.stdin!.write('x'.repeat(16 * 1024));
      expect(await next()).toMatchObject({
        jsonrpc: '2.0',
        id: null,
        error: { code: -32600, message: expect.stringContaining('longer than') },
      });
      child.stdin!.write(`tail of the long line\n${JSON.stringify({ jsonrpc: '2.0', id: 8, method: 'ping' })}\n`);
      expect(await next()).toEqual({ jsonrpc: '2.0', id: 8, result: {} });
    } finally {
      child.stdin!.end();
      await once(child, 'close');
    }
  });

  it('ends the session and exits 0 when the agent closes its stdout, though stdin stays open', async () => {
    const child = spawn(process.execPath, [BIN, 'mcp'], { env: mcpEnv(db().databaseUrl, key), stdio: ['pipe', 'pipe', 'pipe'] });
    const closed = once(child, 'close');
    try {
      child.stdout!.destroy();
      // The answer to this ping is written to a closed pipe: the transport closes, and the command with it.
      child.stdin!.write(`${JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'ping' })}\n`);
      expect(await closed).toEqual([0, null]);
    } finally {
      child.stdin!.end();
    }
  });
});
