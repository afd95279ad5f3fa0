import type { Command } from 'commander';
import { InputError } from '../../domain/errors.js';
import { createAuthenticator } from '../../auth/authenticator.js';
import { DAY_MS } from '../../domain/duration.js';
import { CONTACTS_READ } from '../../domain/scopes.js';
import { serviceKeyFrom } from '../../web/service-key.js';
import { createLogger } from '../../logger.js';
import { contactUrlFor } from '../../mcp/contact-url.js';
import { withStore } from '../context.js';
import type { CliIo } from '../io.js';

/** The environment variable that holds the key `contacts-api mcp` acts with. */
export const MCP_KEY_VARIABLE = 'CONTACTS_API_KEY';

export function registerMcpCommand(program: Command, io: CliIo): void {
  program
    .command('mcp')
    .description(`serve the contact tools to a local agent over MCP on stdin/stdout (key in ${MCP_KEY_VARIABLE})`)
    .action(async () => {
      const key = io.env[MCP_KEY_VARIABLE]?.trim();
      if (!key) throw new InputError(`${MCP_KEY_VARIABLE} is not set; mcp serves the contacts of that key's user`);
      await withStore(io, async (store, config) => {
        // stdout carries the protocol only: the log goes to stderr.
        const log = createLogger(config.logLevel, process.stderr);
        const authenticator = createAuthenticator({
          keys: store.keys,
          apiKeyPrefix: config.apiKeyPrefix,
          onTouchError: (error) => log.warn({ err: error }, 'could not record API key use'),
        });
        const authorization = `Bearer ${key}`;
        const owner = async () => (await authenticator.authenticate(authorization, CONTACTS_READ)).ownerId;
        // A bad key stops the command (exit 1, the API's 401/403 text on stderr) before anything is served.
        await owner();

        const serviceKey = serviceKeyFrom(store.oauth);
        // Loaded here, not with the program: every other command (serve, in each worker) would carry the MCP SDK.
        const { answerUnreadableLines, createMcpServer, serveStdio, StdioServerTransport } = await import('../../mcp/local.js');
        const stdin = answerUnreadableLines(process.stdin);
        const transport = new StdioServerTransport(stdin.input, process.stdout);
        stdin.answerWith((message) => transport.send(message as Parameters<typeof transport.send>[0]));
        // One server for the connection, of the era its first message chose (2026-07-28, or a 2025 revision).
        const handle = serveStdio(
          () =>
            createMcpServer({
              contacts: store.contacts,
              owner,
              onError: (error) => log.error({ err: error }, 'MCP tool failed'),
              contactUrl: contactUrlFor(config.contactUrlTemplate, config.oauth.issuer),
              serviceKey,
              retentionMs: config.changesRetentionDays * DAY_MS,
            }),
          {
            transport,
            onerror: (error) => {
              // A line that is JSON but not JSON-RPC is the client's, answered -32600; anything else is ours to see.
              if (!stdin.onerror(error)) log.error({ err: error }, 'MCP stdio failed');
            },
          },
        );
        // The transport closing (the agent closed our stdin or stdout, or sent a line past its buffer) or a signal ends the
        // session; the store is closed after it. serveStdio has set the transport's onclose: it is kept, and runs first.
        let stop = () => {};
        await new Promise<void>((resolve) => {
          const served = transport.onclose;
          transport.onclose = () => {
            served?.();
            resolve();
          };
          stop = resolve;
          process.once('SIGINT', stop);
          process.once('SIGTERM', stop);
        });
        process.off('SIGINT', stop);
        process.off('SIGTERM', stop);
        await handle.close();
        stdin.release();
      });
    });
}
