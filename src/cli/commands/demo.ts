import { fileURLToPath } from 'node:url';
import type { Command } from 'commander';
import { DEFAULT_HOST, listenUrlOf, type Config } from '../../config.js';
import { prepareDemo } from '../../operations/demo.js';
import { printableDatabaseUrl } from '../../store/open-store.js';
import { withStore } from '../context.js';
import { print, type CliIo } from '../io.js';

export function registerDemoCommand(program: Command, io: CliIo): void {
  program
    .command('demo')
    .description('create (once) a Pro demo user with generated contacts; print a fresh key, revoking the last one, and a curl line')
    .option('--json', 'print one JSON object')
    .action(async (options: { json?: boolean }) => {
      const result = await withStore(
        io,
        async (store, config) => {
          const { user, key, keyId, revokedKeyIds, contacts } = await prepareDemo(store, config.apiKeyPrefix);
          const curl = `curl -s -H "Authorization: Bearer ${key}" "${listenUrlOf(config.host, config.port)}/api/v1/contacts?limit=2"`;
          return { user: user.email, key, key_id: keyId, revoked_keys: revokedKeyIds, contacts, curl, serve: serveCommand(config) };
        },
        { create: true },
      );
      print(
        io,
        options,
        result,
        [
          `Demo user ${result.user} (pro) has ${result.contacts} contacts.`,
          `API key (shown only now): ${result.key}`,
          ...result.revoked_keys.map((id) => `Revoked the previous demo key ${id}: one demo key is active at a time.`),
          `With the server running (${result.serve}), try:`,
          `  ${result.curl}`,
        ].join('\n'),
      );
    });
}

/**
 * The command that serves this database where the curl line points, runnable from any directory and whatever the
 * shell's PORT and HOST: the built CLI and the database by absolute path (a PostgreSQL URL is not repeated, as it
 * may hold a password), the port always and the address when it is not the default.
 */
function serveCommand(config: Config): string {
  const address = config.host === DEFAULT_HOST ? '' : ` --host ${config.host}`;
  const cli = `node ${fileURLToPath(new URL('../main.js', import.meta.url))} serve${address} --port ${config.port}`;
  const url = printableDatabaseUrl(config.database);
  return url === null ? `${cli}, with the same DATABASE_URL` : `DATABASE_URL=${url} ${cli}`;
}
